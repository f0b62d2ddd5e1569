"""What every VM test shares: how a run that cannot happen (Skip) or went wrong (VmFailure) is
said, the log line, and building the guests' workloads. The plumbing has one module per concern:

  kernel_packages  a Debian kernel: resolved with apt (private lists for other suites), unpacked
  initramfs        the modules it needs (kmod's modinfo), the busybox initramfs that loads them
  qemu_run         booting it under QEMU (accelerator choice, console triage, timeouts)

The guest mounts the host's root read-only over 9p and runs one script inside a chroot of it,
so every host path (build tree, test scripts, compiled workloads) is valid in the guest too.
A second, writable 9p share is mounted over the per-run results directory at the *same* path,
so the guest script simply writes files into $HUCVM_RESULTS and the host reads them afterwards.

Python 3 standard library only.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

# Exit code ctest treats as "skipped" (SKIP_RETURN_CODE in CMakeLists.txt).
SKIP = 77


class Skip(Exception):
    """The tier cannot run on this machine (missing tool/package source). Not a pass."""


class VmFailure(Exception):
    """The VM run itself failed (boot, module load, mount, hang). Always a test failure."""


def log(msg: str) -> None:
    print(f"[vm] {msg}", file=sys.stderr, flush=True)


def compile_c(src: Path, out: Path, cflags=("-O2", "-Wall", "-Wextra", "-Werror"),
              libs=()) -> Path:
    """`out` built from `src` unless it is newer; `libs` ("-lbpf") go after the source, where the
    linker looks for what it uses."""
    if out.exists() and out.stat().st_mtime >= src.stat().st_mtime:
        return out
    cc = os.environ.get("CC", "cc")
    if shutil.which(cc) is None:
        raise Skip(f"no C compiler ({cc}) to build guest workloads")
    out.parent.mkdir(parents=True, exist_ok=True)
    subprocess.run([cc, *cflags, "-o", str(out), str(src), *libs], check=True)
    return out
