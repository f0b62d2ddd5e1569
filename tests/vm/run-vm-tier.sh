#!/bin/sh
# Entry point of the VM tier: run-vm-tier.sh BUILD_DIR [vm_tier.py options]
# Boots Debian's kernels under QEMU (downloaded once into BUILD_DIR/vm-cache: Debian 12's 6.1 and
# 6.12, trixie's 6.12 and the newest of trixie-backports and sid) and checks exact usercopy-check
# counts. Exit 0 pass, 1 fail, 77 skip.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
if [ $# -lt 1 ]; then
    echo "usage: $0 BUILD_DIR [--kernel bullseye|6.1|6.12|trixie|trixie-backports|sid|trixie-backports-cloud|trixie-backports-rt ... | --all] [--run fentry|kprobe|hardened_usercopy=off|memory-64cpus] [--timeout S] [-v]" >&2
    exit 2
fi
if ! command -v python3 >/dev/null 2>&1; then
    echo "SKIP: python3 not found"
    exit 77
fi
exec python3 "$here/vm_tier.py" "$@"
