#!/usr/bin/env bash
# Configures and builds hucprof into BUILD_DIR (default: build/). Used by run.sh and test.sh.
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
build=${BUILD_DIR:-$here/build}
cmake -S "$here" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=${BUILD_TYPE:-RelWithDebInfo} >/dev/null
ninja -C "$build" -j"$(nproc)"
