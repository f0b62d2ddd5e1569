#!/usr/bin/env bash
# Sets up everything and runs every test tier: unit (no root), host (root, this kernel),
# vm (QEMU with Debian's kernels), e2e (a real Prometheus server), sanitize, fuzz.
#   scripts/test.sh [ctest flags...]  (as root)  e.g. -L unit
# Without flags the run has three passes, each shaped by what its tests need of the machine:
#   1. label unit, two at a time: no root, nothing of the machine but a core each.
#   2. one by one: host and e2e tests measure real floods and timeouts on this kernel, and
#      fuzz_build compiles on every core; none may share the cores.
#   3. two at a time: the VM tests, one guest at a time (RESOURCE_LOCK hucprof_vm; a TCG guest
#      runs on one host thread), and on the other core the sanitize tier built with one job
#      (HUC_SANITIZE_JOBS=1), then the fuzz_NAME targets (one single-threaded libFuzzer process
#      each, for a fixed time). Alone, the guests would leave that core idle for most of the
#      pass; the tests' COST orders them so on a fresh clone (guests first, then sanitize).
# With flags, one ctest run with exactly those flags.
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
start=$SECONDS
"$here/scripts/install-deps.sh"
echo "test.sh: dependencies ready after $((SECONDS - start)) s"
# Line tables only (-g1): a fresh clone's build in ~60 % of -g's time; no test reads more of
# hucprof's own debug information than files and lines.
DEBUG_LEVEL=1 "$here/scripts/build.sh"
echo "test.sh: build done after $((SECONDS - start)) s"
cd "${BUILD_DIR:-$here/build}"
# Every test sets its own TIMEOUT; this bounds one that does not, far below CI's budget.
ctest=(ctest --output-on-failure --timeout 600)
if [ $# -gt 0 ]; then
  exec "${ctest[@]}" "$@"
fi
jobs=$(nproc)
[ "$jobs" -le 2 ] || jobs=2
rc=0
logs=Testing/passes
mkdir -p "$logs"
"${ctest[@]}" -j"$jobs" -L '^unit$' 2>&1 | tee "$logs/unit.log" || rc=$?
echo "test.sh: the unit pass done after $((SECONDS - start)) s"
"${ctest[@]}" -LE '^(unit|vm|fuzz|sanitize)$' 2>&1 | tee "$logs/alone.log" || rc=$?
"${ctest[@]}" -R '^fuzz_build$' 2>&1 | tee -a "$logs/alone.log" || rc=$?
echo "test.sh: the one-by-one pass done after $((SECONDS - start)) s"
# -FS: fuzz_build ran above; a fuzz_NAME whose binary it did not build fails saying so.
HUC_SANITIZE_JOBS=1 "${ctest[@]}" -j"$jobs" -L '^(vm|fuzz|sanitize)$' -LE '^unit$' \
  -E '^fuzz_build$' -FS huc_fuzz_build 2>&1 | tee "$logs/guests.log" || rc=$?
echo "test.sh: the guests pass done after $((SECONDS - start)) s"
# A CI summary shows only the end of the output: repeat each failed check's own line there, so a
# red run says what failed without its full log (vm/host tiers print "FAIL: ..." and Python's
# "AssertionError: ..." with the values that failed, the e2e checklist "FAIL ...", gtest
# "[  FAILED  ]" and "file:line: Failure", ctest "***Failed"/"***Timeout"), and the e2e
# checklist's indented line under its "FAIL ...": the values that failed.
if [ "$rc" -ne 0 ]; then
  echo "== what failed (from $PWD/$logs)"
  awk '/^(FAIL:|FAIL |AssertionError: |\[  FAILED  \]|.*: Failure$|.*\*\*\*(Failed|Timeout|Exception))/ {
         print; detail = /^FAIL /; next }
       detail && /^     / { print; detail = 0; next }
       { detail = 0 }' "$logs"/*.log | cut -c1-700 | tail -n 40 || true
fi
exit "$rc"
