#!/usr/bin/env python3
"""Downloads and unpacks a Debian kernel for a guest the way the VM tier does (kernel_packages.resolve_kernel:
the machine's own apt sources, or a private apt list for trixie, trixie-backports or sid; the
split 7.x packages too), and prints where its files are as shell assignments, for the shell
harnesses (tests/vm/arm64/run-guest.sh):

  fetch_kernel.py CACHE_DIR META [SUITE]
    KDIR=... RELEASE=... VMLINUZ=... CONFIG=... CONFIG_INSTALL_PATH=... MODDIR=...

Exit 0, 77 when the machine cannot fetch it (no apt, nothing resolvable), 1 on a broken package.
"""

from __future__ import annotations

import shlex
import sys
from pathlib import Path

sys.dont_write_bytecode = True
sys.path.insert(0, str(Path(__file__).resolve().parent))
import kernel_packages  # noqa: E402
import vmlib  # noqa: E402


def main() -> int:
    if len(sys.argv) not in (3, 4):
        print(__doc__, file=sys.stderr)
        return 2
    cache, meta = Path(sys.argv[1]).resolve(), sys.argv[2]
    suite = sys.argv[3] if len(sys.argv) == 4 and sys.argv[3] else None
    cache.mkdir(parents=True, exist_ok=True)
    try:
        k = kernel_packages.resolve_kernel(meta, meta, cache, {}, suite=suite)
    except vmlib.Skip as e:
        print(f"SKIP: {e}", file=sys.stderr)
        return vmlib.SKIP
    except vmlib.VmFailure as e:
        print(f"FAIL: {e}", file=sys.stderr)
        return 1
    for name, value in (("KDIR", k.root), ("RELEASE", k.release), ("VMLINUZ", k.vmlinuz),
                        ("CONFIG", k.config), ("CONFIG_INSTALL_PATH", k.config_install_path),
                        ("MODDIR", k.moddir), ("PACKAGE", k.package)):
        print(f"{name}={shlex.quote(str(value))}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
