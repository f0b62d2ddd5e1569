#!/usr/bin/env python3
"""Self-test of the VM harness: the ways a VM run can go wrong must FAIL, never pass.

Usage: harness_selftest.py BUILD_DIR        (boots the 6.1 guest three times, ~30 s)
Exit: 0 pass, 1 fail, 77 skip.
"""

import sys
import time
from pathlib import Path

sys.dont_write_bytecode = True  # keep the source tree clean
sys.path.insert(0, str(Path(__file__).resolve().parent))
import vmlib  # noqa: E402
from vm_tier import KERNELS  # noqa: E402
from vmlib import Skip, VmFailure  # noqa: E402


def main() -> int:
    build = Path(sys.argv[1]).resolve()
    cache = build / "vm-cache"
    work = build / "vm-runs" / "selftest"
    work.mkdir(parents=True, exist_ok=True)
    failures = []

    def check(cond, what):
        print(f"{'ok  ' if cond else 'FAIL'} {what}", flush=True)
        if not cond:
            failures.append(what)

    try:
        vmlib.preflight()
        spec = KERNELS[0]
        k = vmlib.resolve_kernel(spec.label, spec.meta_package, cache, {})
        initrd = cache / f"initramfs-{k.release}.cpio"
        vmlib.build_initramfs(k, initrd)
    except Skip as e:
        print(f"SKIP: {e}")
        return vmlib.SKIP

    # 1. A module that neither exists nor is built in is an error, not silently skipped.
    try:
        vmlib.resolve_modules(k, ["hucvm_no_such_module"])
        check(False, "missing module raises VmFailure")
    except VmFailure as e:
        check("hucvm_no_such_module" in str(e), "missing module raises VmFailure")

    # 2. Exit status and several result files come back; extra cmdline reaches the guest.
    script = work / "rc7.sh"
    script.write_text("#!/bin/sh\necho one > a.txt\nmkdir -p sub && cat /proc/cmdline > sub/b.txt\n"
                      "echo \"$HUCVM_GREETING\" > c.txt\nexit 7\n")
    script.chmod(0o755)
    r = vmlib.run_vm(k, initrd, script, work / "rc7", extra_cmdline="hucvm.selftest=1",
                     env={"HUCVM_GREETING": "it's here"}, timeout_s=240)
    check(r.guest_rc == 7, f"guest exit status 7 comes back (got {r.guest_rc})")
    check(r.file("a.txt").read_text() == "one\n", "result file a.txt")
    check("hucvm.selftest=1" in r.file("sub/b.txt").read_text().split(), "extra cmdline + subdir")
    check(r.file("c.txt").read_text() == "it's here\n", "env with a quote reaches the guest")

    # 3. Failure inside init before the script (here: results dir not reachable) -> VmFailure
    #    carrying the console log.
    try:
        vmlib.run_vm(k, initrd, script, work / "badinit",
                     extra_cmdline="hucvm.results=/nonexistent-hucvm-dir", timeout_s=240)
        check(False, "init failure raises VmFailure")
    except VmFailure as e:
        check("HUCVM-FAIL: results dir /nonexistent-hucvm-dir" in str(e),
              "init failure raises VmFailure with the console log")

    # 4. A hung guest is killed at the hard timeout -> VmFailure.
    hang = work / "hang.sh"
    hang.write_text("#!/bin/sh\nsleep 100000\n")
    hang.chmod(0o755)
    t0 = time.monotonic()
    try:
        vmlib.run_vm(k, initrd, hang, work / "hang", timeout_s=45)
        check(False, "hang raises VmFailure")
    except VmFailure as e:
        check("hung" in str(e) and time.monotonic() - t0 < 90, "hang raises VmFailure at the timeout")

    print("PASS" if not failures else f"FAIL: {len(failures)} self-test(s)")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
