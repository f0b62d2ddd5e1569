#!/usr/bin/env bash
# Runs one libFuzzer target for SECONDS from its checked-in seed corpus and prints what it did.
# FUZZ_SEED_FILES (':'-separated) adds seeds the build made (ELF files it compiled) to the
# checked-in ones, which may then be absent.
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
corpora=()
[ -d "$corpus" ] && corpora+=("$corpus")
if [ -n "${FUZZ_SEED_FILES:-}" ]; then
  # Copied into a directory of their own: libFuzzer takes seeds by the directory.
  mkdir -p "$scratch/built-seeds"
  IFS=: read -ra built <<<"$FUZZ_SEED_FILES"
  for seed in "${built[@]}"; do
    if ! cp "$seed" "$scratch/built-seeds/"; then
      echo "fuzz $name: the seed $seed was not built"
      exit 1
    fi
  done
  corpora+=("$scratch/built-seeds")
fi
if [ ${#corpora[@]} -eq 0 ]; then
  echo "fuzz $name: no seeds: neither $corpus nor FUZZ_SEED_FILES"
  exit 1
fi
extra=()
[ -f "$fuzz_dir/dict/$name.dict" ] && extra+=("-dict=$fuzz_dir/dict/$name.dict")
log=$scratch/libfuzzer.log
# -error_exitcode: libFuzzer's default (77) is ctest's "skipped". -timeout: one input may take
# 25 s on a loaded machine before it counts as a hang.
"$binary" -max_total_time="$seconds" -timeout=25 -rss_limit_mb=2048 -error_exitcode=1 \
  -timeout_exitcode=1 -print_final_stats=1 -artifact_prefix="$artifacts/$name-" \
  "${extra[@]}" "$@" "$new_inputs" "${corpora[@]}" >"$log" 2>&1
rc=$?
runs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -1)
rate=$(sed -n 's/^stat::average_exec_per_sec: *//p' "$log" | tail -1)
seeds=$(find "${corpora[@]}" -type f | wc -l)
found=$(find "$new_inputs" -maxdepth 1 -type f | wc -l)
if [ "$rc" -ne 0 ]; then
  tail -n 60 "$log"
  echo "fuzz $name: FAILED (exit $rc) after ${runs:-?} executions; reproducer(s):"
  grep -h -o "Test unit written to .*" "$log" | sed 's/^/  /'
  echo "  replay: $binary <file>"
  exit 1
fi
echo "fuzz $name: ${runs:-?} executions in ${seconds} s (${rate:-?}/s), ${seeds} seeds, ${found} new inputs, 0 crashes"
