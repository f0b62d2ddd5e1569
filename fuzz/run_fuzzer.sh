#!/usr/bin/env bash
# Runs one libFuzzer target for SECONDS from its checked-in seed corpus and prints what it did.
# Exit 0: no crash, leak, timeout, sanitizer report or failed property; else the reproducer is
# in ARTIFACT_DIR (printed, with the command to replay it). New inputs go to a scratch directory
# that is removed afterwards, or to FUZZ_NEW_INPUTS if set: the checked-in corpus is only read.
#   fuzz/run_fuzzer.sh BINARY FUZZ_DIR NAME SECONDS ARTIFACT_DIR [libFuzzer flags...]
set -uo pipefail
binary=$1 fuzz_dir=$2 name=$3 seconds=$4 artifacts=$5
shift 5
corpus=$fuzz_dir/corpus/$name
if [ ! -x "$binary" ]; then
  echo "fuzz $name: $binary was not built (fuzz_build failed or was skipped)"
  exit 1
fi
mkdir -p "$artifacts"
scratch=$(mktemp -d "${TMPDIR:-/tmp}/hucprof-fuzz-$name.XXXXXX")
trap 'rm -rf "$scratch"' EXIT
new_inputs=${FUZZ_NEW_INPUTS:-$scratch/new}
mkdir -p "$new_inputs"
extra=()
[ -f "$fuzz_dir/dict/$name.dict" ] && extra+=("-dict=$fuzz_dir/dict/$name.dict")
log=$scratch/libfuzzer.log
# -error_exitcode: libFuzzer's default (77) is ctest's "skipped". -timeout: one input may take
# 25 s on a loaded machine before it counts as a hang.
"$binary" -max_total_time="$seconds" -timeout=25 -rss_limit_mb=2048 -error_exitcode=1 \
  -timeout_exitcode=1 -print_final_stats=1 -artifact_prefix="$artifacts/$name-" \
  "${extra[@]}" "$@" "$new_inputs" "$corpus" >"$log" 2>&1
rc=$?
runs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -1)
rate=$(sed -n 's/^stat::average_exec_per_sec: *//p' "$log" | tail -1)
seeds=$(find "$corpus" -type f | wc -l)
found=$(find "$new_inputs" -maxdepth 1 -type f | wc -l)
if [ "$rc" -ne 0 ]; then
  tail -n 60 "$log"
  echo "fuzz $name: FAILED (exit $rc) after ${runs:-?} executions; reproducer(s):"
  grep -h -o "Test unit written to .*" "$log" | sed 's/^/  /'
  echo "  replay: $binary <file>"
  exit 1
fi
echo "fuzz $name: ${runs:-?} executions in ${seconds} s (${rate:-?}/s), ${seeds} seeds, ${found} new inputs, 0 crashes"
