#!/usr/bin/env bash
# Sets up everything and runs every test tier: unit (no root), host (root, this kernel),
# vm (QEMU with Debian's 6.1 and 6.12 kernels), e2e (a real Prometheus server).
#   scripts/test.sh [ctest flags...]  (as root)  e.g. -L unit
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
"$here/scripts/install-deps.sh"
"$here/scripts/build.sh"
cd "${BUILD_DIR:-$here/build}"
exec ctest --output-on-failure --timeout 1800 "$@"
