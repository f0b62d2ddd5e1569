#!/usr/bin/env bash
# Sets up everything and runs hucprof in the foreground on this machine's kernel.
#   scripts/run.sh [hucprof run flags...]  (as root)  e.g. --web.listen-address :9478
# Metrics: http://localhost:9478/metrics (default). Ctrl-C stops it and detaches everything.
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
"$here/scripts/install-deps.sh"
"$here/scripts/build.sh"
exec "${BUILD_DIR:-$here/build}/daemon/hucprof" run "$@"
