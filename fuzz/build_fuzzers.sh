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
cmake -S "$src" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo \
  -DCMAKE_C_COMPILER=clang -DCMAKE_CXX_COMPILER=clang++ "${launcher[@]}" -DHUCPROF_FUZZ=ON >/dev/null
ninja -C "$build" huc_fuzzers
