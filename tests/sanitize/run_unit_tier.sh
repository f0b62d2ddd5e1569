#!/usr/bin/env bash
# Builds the C++ unit tests with -fsanitize=address,undefined into BUILD_DIR and runs them.
# Any AddressSanitizer, LeakSanitizer or UBSan report fails (UBSan does not recover).
#   tests/sanitize/run_unit_tier.sh SOURCE_DIR BUILD_DIR [CXX_COMPILER]
# HUC_SANITIZE_JOBS=N: build and test with N jobs (default: every core). scripts/test.sh runs it
# with 1 beside a VM guest, which has the other core to itself.
set -euo pipefail
src=$1 build=$2 cxx=${3:-c++}
launcher=()
if command -v ccache >/dev/null; then
  launcher=(-DCMAKE_C_COMPILER_LAUNCHER=ccache -DCMAKE_CXX_COMPILER_LAUNCHER=ccache)
fi
# -O0 -g1: reports keep file and line, and a tier that builds everything a second time on a
# 2-core CI machine compiles most of its time in instrumented code generation, not in headers:
# 12 test files took 62 s at -O1 and 36 s at -O0 (a precompiled gtest/Snapshot header saved
# nothing). The tests run in seconds either way. The daemon's sources compile in batches
# (-DCMAKE_UNITY_BUILD; the unit tests are batched in every build); the main build compiles the
# daemon file by file, which catches a missing #include.
opt="-O0 -g1 -DNDEBUG"
cmake -S "$src" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCMAKE_UNITY_BUILD=ON \
  -DCMAKE_CXX_FLAGS_RELWITHDEBINFO="$opt" -DCMAKE_C_FLAGS_RELWITHDEBINFO="$opt" \
  -DCMAKE_CXX_COMPILER="$cxx" "${launcher[@]}" -DHUCPROF_SANITIZE=ON >/dev/null
jobs=${HUC_SANITIZE_JOBS:-$(nproc)}
ninja -C "$build" -j"$jobs" unit_tests
export ASAN_OPTIONS=detect_leaks=1:abort_on_error=1:strict_string_checks=1:detect_stack_use_after_return=1
export UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1
cd "$build"
exec ctest --output-on-failure -L unit -j"$jobs"
