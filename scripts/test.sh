#!/usr/bin/env bash
# Sets up everything and runs every test tier: unit (no root), host (root, this kernel),
# vm (QEMU with Debian's kernels), e2e (a real Prometheus server), sanitize, fuzz.
#   scripts/test.sh [ctest flags...]  (as root)  e.g. -L unit
# Without flags the run has two passes: the tests that use one core each and nothing of the
# machine (labels unit and fuzz: each fuzz target is one single-threaded libFuzzer process for a
# fixed time) two at a time, then the rest one by one, because host, vm and e2e tests measure
# real floods, guests and timeouts and must not share the cores with another test. With flags,
# one ctest run with exactly those flags.
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
"${ctest[@]}" -j"$jobs" -L '^(unit|fuzz)$' 2>&1 | tee "$logs/unit-fuzz.log" || rc=$?
echo "test.sh: the two-at-a-time pass done after $((SECONDS - start)) s"
"${ctest[@]}" -LE '^(unit|fuzz)$' 2>&1 | tee "$logs/alone.log" || rc=$?
echo "test.sh: the one-by-one pass done after $((SECONDS - start)) s"
# A CI summary shows only the end of the output: repeat each failed check's own line there, so a
# red run says what failed without its full log (vm/host tiers print "FAIL: ..." and Python's
# "AssertionError: ..." with the values that failed, the e2e checklist "FAIL ...", gtest
# "[  FAILED  ]" and "file:line: Failure", ctest "***Failed"/"***Timeout").
if [ "$rc" -ne 0 ]; then
  echo "== what failed (from $PWD/$logs)"
  grep -h -E '^(FAIL:|FAIL |AssertionError: |\[  FAILED  \]|.*: Failure$|.*\*\*\*(Failed|Timeout|Exception))' \
    "$logs"/*.log | cut -c1-400 | tail -n 40 || true
fi
exit "$rc"
