#!/usr/bin/env python3
"""Captures the real consoles in this directory: a Debian kernel, booted exactly as the VM tier
boots it (vmlib, with its lockup parameters), provoked into a lockup by hucvm_lockup.ko.

  capture.py BUILD_DIR --kernel 6.1|6.12 --scenario ipi|check|spin [-v]

  ipi    CPU 1 spins with interrupts off, CPU 0 flips a static key (both in the module):
         text_poke_bp waits in smp_call_function for CPU 1 - the shape of the TCG
         text-patching artefact, with no BPF anywhere.
  check  hucprof runs in probe mode (fentry) and the module calls __check_object_size in a loop
         on CPU 1 with preemption off: a lockup with hucprof's BPF on the stack.
  spin   the module spins on CPU 1 with preemption off: a lockup with neither.

Writes console-<kernel>-lockup-<scenario>.txt here and prints console_triage's verdict. Needs a
built tree (daemon/hucprof), the kernel package in BUILD_DIR/vm-cache (run the VM tier once) and
Debian's linux-headers-<release> for that kernel (to build the module). Not part of any test: the
captured files are the test's input (test_emulator_flake.py).
"""

from __future__ import annotations

import argparse
import shutil
import subprocess
import sys
from pathlib import Path

sys.dont_write_bytecode = True
HERE = Path(__file__).resolve().parent
VM = HERE.parents[1]
sys.path.insert(0, str(VM))
import console_triage  # noqa: E402
import initramfs  # noqa: E402
import kernel_packages  # noqa: E402
import qemu_run  # noqa: E402
import vmlib  # noqa: E402
from vm_tier import KERNELS  # noqa: E402

GUEST = r"""#!/bin/sh
# Guest side of capture.py (written by it into the run directory).
mod=$HUCVM_MODULE
case "$HUCVM_SCENARIO" in
ipi)
    # Everything from here on runs on CPU 0: CPU 1 will not run anything for a while.
    taskset -cp 0 $$ > /dev/null
    echo "HUCVM-CAPTURE: CPU 1 spins with interrupts off; CPU 0 flips a static key"
    taskset -c 0 insmod "$mod" mode=ipi victim=1
    ;;
check)
    "$HUCVM_HUCPROF" run --mode probe --probe.attach fentry --interval 1s > daemon.log 2>&1 &
    for _ in $(seq 120); do
        curl -s localhost:9478/metrics > metrics.txt 2>/dev/null
        grep -q '^hucprof_drains_total [1-9]' metrics.txt && break
        sleep 1
    done
    grep '^hucprof_probe_attached' metrics.txt
    echo "HUCVM-CAPTURE: hucprof attached; CPU 1 calls __check_object_size with preemption off"
    taskset -cp 0 $$ > /dev/null
    taskset -c 1 insmod "$mod" mode=check
    ;;
spin)
    echo "HUCVM-CAPTURE: CPU 1 spins with preemption off"
    taskset -cp 0 $$ > /dev/null
    taskset -c 1 insmod "$mod" mode=spin
    ;;
esac
echo "HUCVM-CAPTURE: the guest went on (no lockup?)"
exit 3
"""


def build_module(k: kernel_packages.Kernel, out: Path) -> Path:
    headers = Path("/usr/src") / f"linux-headers-{k.release}"
    if not headers.is_dir():
        sys.exit(f"capture: {headers} missing: apt-get install linux-headers-{k.release}")
    shutil.rmtree(out, ignore_errors=True)
    out.mkdir(parents=True)
    for name in ("hucvm_lockup.c", "Kbuild"):
        shutil.copy(HERE / name, out / name)
    subprocess.run(["make", "-s", "-C", str(headers), f"M={out}", "modules"], check=True)
    return out / "hucvm_lockup.ko"


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("build_dir", type=Path)
    ap.add_argument("--kernel", default="6.1", choices=[k.label for k in KERNELS])
    ap.add_argument("--scenario", required=True, choices=["ipi", "check", "spin"])
    ap.add_argument("--verbose", "-v", action="store_true")
    a = ap.parse_args()
    build = a.build_dir.resolve()
    cache = build / "vm-cache"
    spec = next(k for k in KERNELS if k.label == a.kernel)
    k = kernel_packages.resolve_kernel(spec.label, spec.meta_package, cache, {}, suite=spec.suite)
    initrd = cache / f"initramfs-{k.release}.cpio"
    initramfs.build_initramfs(k, initrd)
    module = build_module(k, cache / f"lockup-module-{k.release}")
    work = build / "vm-runs" / "lockup-capture"
    work.mkdir(parents=True, exist_ok=True)
    guest = work / "guest.sh"
    guest.write_text(GUEST)
    guest.chmod(0o755)
    run = work / f"{a.kernel}-{a.scenario}"
    try:
        # One boot, never retried: the console is what is wanted.
        res = qemu_run._run_vm_once(k, initrd, guest, run, timeout_s=420, echo_console=a.verbose,
                                 env={"HUCVM_MODULE": str(module), "HUCVM_SCENARIO": a.scenario,
                                      "HUCVM_HUCPROF": str(build / "daemon" / "hucprof")})
        print(f"capture: the guest finished (rc={res.guest_rc}): no lockup captured")
        return 1
    except vmlib.VmFailure as e:
        print(f"capture: run_vm said: {str(e).splitlines()[0]}")
    console = (work / f"{run.name}.console.log").read_text(errors="replace")
    out = HERE / f"console-{a.kernel}-lockup-{a.scenario}.txt"
    out.write_text(console)
    v = console_triage.triage(console)
    print(f"capture: wrote {out} ({len(console.splitlines())} lines); verdict: "
          + (f"retry={v.retry}: {v.summary}" if v else "none"))
    return 0


if __name__ == "__main__":
    sys.exit(main())
