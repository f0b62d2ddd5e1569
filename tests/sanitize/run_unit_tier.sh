#!/usr/bin/env bash
# Builds the C++ unit tests with -fsanitize=address,undefined into BUILD_DIR and runs them.
# Any AddressSanitizer, LeakSanitizer or UBSan report fails (UBSan does not recover).
#   tests/sanitize/run_unit_tier.sh SOURCE_DIR BUILD_DIR [CXX_COMPILER]
set -euo pipefail
src=$1 build=$2 cxx=${3:-c++}
launcher=()
if command -v ccache >/dev/null; then
  launcher=(-DCMAKE_C_COMPILER_LAUNCHER=ccache -DCMAKE_CXX_COMPILER_LAUNCHER=ccache)
fi
# -O1 -g1, as AddressSanitizer's documentation suggests: reports keep file and line, and the tree
# compiles in ~60 % of the time -O2 -g takes (metrics_server.cpp: 7.7 s against 13 s), which a
# tier that builds everything a second time on a 2-core CI machine needs.
opt="-O1 -g1 -DNDEBUG"
cmake -S "$src" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo \
  -DCMAKE_CXX_FLAGS_RELWITHDEBINFO="$opt" -DCMAKE_C_FLAGS_RELWITHDEBINFO="$opt" \
  -DCMAKE_CXX_COMPILER="$cxx" "${launcher[@]}" -DHUCPROF_SANITIZE=ON >/dev/null
ninja -C "$build" unit_tests
export ASAN_OPTIONS=detect_leaks=1:abort_on_error=1:strict_string_checks=1:detect_stack_use_after_return=1
export UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1
cd "$build"
exec ctest --output-on-failure -L unit -j"$(nproc)"
