#!/usr/bin/env bash
# Configures and builds the libFuzzer targets with clang into BUILD_DIR (a tree of its own:
# every library is compiled with -fsanitize=fuzzer-no-link,address,undefined).
#   fuzz/build_fuzzers.sh SOURCE_DIR BUILD_DIR
set -euo pipefail
src=$1 build=$2
for tool in clang clang++; do
  if ! command -v "$tool" >/dev/null; then
    echo "SKIP: $tool not installed (scripts/install-deps.sh installs clang)"
    exit 77
  fi
done
runtime=$(clang -print-file-name=libclang_rt.fuzzer-x86_64.a 2>/dev/null || true)
if [ ! -f "$runtime" ]; then
  runtime=$(find "$(clang -print-resource-dir)" -name 'libclang_rt.fuzzer*.a' 2>/dev/null | head -1)
fi
if [ -z "$runtime" ] || [ ! -f "$runtime" ]; then
  echo "SKIP: clang's libFuzzer runtime is missing (Debian: libclang-rt-14-dev)"
  exit 77
fi
launcher=()
if command -v ccache >/dev/null; then
  launcher=(-DCMAKE_C_COMPILER_LAUNCHER=ccache -DCMAKE_CXX_COMPILER_LAUNCHER=ccache)
fi
# -O1 -g1 and the daemon's sources in batches (-DCMAKE_UNITY_BUILD), as the sanitize tier builds
# (tests/sanitize/run_unit_tier.sh): reports keep file and line, and the tree compiles in a
# third of -O2 -g's time on a 2-core CI machine. The main build stays file by file, which
# catches a missing #include.
opt="-O1 -g1 -DNDEBUG"
cmake -S "$src" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCMAKE_UNITY_BUILD=ON \
  -DCMAKE_CXX_FLAGS_RELWITHDEBINFO="$opt" -DCMAKE_C_FLAGS_RELWITHDEBINFO="$opt" \
  -DCMAKE_C_COMPILER=clang -DCMAKE_CXX_COMPILER=clang++ "${launcher[@]}" -DHUCPROF_FUZZ=ON >/dev/null
ninja -C "$build" huc_fuzzers
