#!/usr/bin/env bash
# The long fuzzing run (docs/benchmarks.md): every target of fuzz/targets.cmake
# for SECONDS each (default 600), JOBS at a time (default: the number of CPUs), from the
# checked-in seed corpus. New inputs stay in OUT/NAME/ (merge them into fuzz/corpus/NAME with
# `BINARY -merge=1 fuzz/corpus/NAME OUT/NAME` if they are worth keeping); crash reproducers go
# to OUT/artifacts/. Prints one line per target and exits 1 if any target failed.
#   bench/fuzz_all.sh [SECONDS] [JOBS]      (FUZZ_BUILD_DIR, FUZZ_OUT override the directories)
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
seconds=${1:-600}
jobs=${2:-$(nproc)}
build=${FUZZ_BUILD_DIR:-$here/build/fuzz-build}
out=${FUZZ_OUT:-$here/build/fuzz-bench}
"$here/fuzz/build_fuzzers.sh" "$here" "$build" >/dev/null
mkdir -p "$out/artifacts"
targets=$(sed -n 's/^huc_fuzz_target(\([a-z_0-9]*\) .*/\1/p' "$here/fuzz/targets.cmake")
echo "fuzzing $(echo "$targets" | wc -w) targets for $seconds s each, $jobs at a time ($(date -u +%FT%TZ))"
status=0
printf '%s\n' $targets | xargs -P "$jobs" -I{} sh -c '
  mkdir -p "$3/{}"
  FUZZ_NEW_INPUTS="$3/{}" "$1/fuzz/run_fuzzer.sh" "$2/fuzz/fuzz_{}" "$1/fuzz" {} "$4" \
    "$3/artifacts" | tail -n 1
' _ "$here" "$build" "$out" "$seconds" || status=1
exit $status
