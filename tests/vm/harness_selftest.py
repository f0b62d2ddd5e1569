#!/usr/bin/env python3
"""Self-test of the VM harness: the ways a VM run can go wrong must FAIL, never pass, and a
guest must be able to say why it is stuck.

Usage: harness_selftest.py BUILD_DIR        (boots the 6.1 guest three times, ~2 min on 2 cores)
Exit: 0 pass, 1 fail, 77 skip.
"""

import argparse
import sys
import time
from pathlib import Path

sys.dont_write_bytecode = True  # keep the source tree clean
sys.path.insert(0, str(Path(__file__).resolve().parent))
import initramfs  # noqa: E402
import kernel_packages  # noqa: E402
import qemu_run  # noqa: E402
import test_hermetic  # noqa: E402
import vmlib  # noqa: E402
from tier_kernels import KERNELS  # noqa: E402
from vmlib import Skip, VmFailure  # noqa: E402


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("build_dir", type=Path)
    build = ap.parse_args().build_dir.resolve()
    cache = build / "vm-cache"
    work = build / "vm-runs" / "selftest"
    work.mkdir(parents=True, exist_ok=True)
    failures = []

    def check(cond, what):
        print(f"{'ok  ' if cond else 'FAIL'} {what}", flush=True)
        if not cond:
            failures.append(what)

    # 0. The guests get what the test gives them: every hucprof a VM test starts names its kernel
    #    debuginfo, or the host's /usr/lib/debug (seen through 9p) would decide (test_hermetic.py).
    found, looked = test_hermetic.problems()
    for p in found:
        print(f"  {p}")
    check(not found and all(looked.values()),
          f"every hucprof of the VM tests names its debuginfo ({looked})")

    try:
        qemu_run.preflight()
        spec = KERNELS[0]
        k = kernel_packages.resolve_kernel(spec.label, spec.meta_package, cache, {})
        initrd = cache / f"initramfs-{k.release}.cpio"
        initramfs.build_initramfs(k, initrd)
    except Skip as e:
        print(f"SKIP: {e}")
        return 1 if failures else vmlib.SKIP

    # 1. A module that neither exists nor is built in is an error, not silently skipped.
    try:
        initramfs.resolve_modules(k, ["hucvm_no_such_module"])
        check(False, "missing module raises VmFailure")
    except VmFailure as e:
        check("hucvm_no_such_module" in str(e), "missing module raises VmFailure")

    # 2. Exit status and several result files come back; extra cmdline reaches the guest; one
    #    vCPU and extra qemu arguments work (an SMBIOS serial number the guest reads back); the
    #    kernel took the lockup parameters, and a backtrace (sysrq l: every active CPU, printed
    #    at the level a lockup's are) reaches the console without being taken for a lockup.
    script = work / "rc7.sh"
    script.write_text("#!/bin/sh\necho one > a.txt\nmkdir -p sub && cat /proc/cmdline > sub/b.txt\n"
                      "echo \"$HUCVM_GREETING\" > c.txt\nnproc > cpus.txt\n"
                      "cat /sys/class/dmi/id/product_serial > serial.txt\n"
                      "for f in watchdog_thresh softlockup_panic softlockup_all_cpu_backtrace "
                      "panic_on_rcu_stall; do\n"
                      "  echo \"$f $(cat /proc/sys/kernel/$f)\"; done > lockup-params.txt\n"
                      "echo \"rcu_cpu_stall_timeout $(cat /sys/module/rcupdate/parameters/"
                      "rcu_cpu_stall_timeout)\" >> lockup-params.txt\n"
                      "echo l > /proc/sysrq-trigger\nsleep 1\nexit 7\n")
    script.chmod(0o755)
    r = qemu_run.run_vm(k, initrd, script, work / "rc7", extra_cmdline="hucvm.selftest=1",
                     env={"HUCVM_GREETING": "it's here"}, timeout_s=240, cpus=1,
                     qemu_args=["-smbios", "type=1,serial=hucvm-selftest"])
    check(r.guest_rc == 7, f"guest exit status 7 comes back (got {r.guest_rc})")
    check(r.file("a.txt").read_text() == "one\n", "result file a.txt")
    check("hucvm.selftest=1" in r.file("sub/b.txt").read_text().split(), "extra cmdline + subdir")
    check(r.file("c.txt").read_text() == "it's here\n", "env with a quote reaches the guest")
    check(r.file("cpus.txt").read_text().strip() == "1", "cpus=1: the guest has one CPU")
    check(r.file("serial.txt").read_text().strip() == "hucvm-selftest",
          "qemu_args reach qemu (SMBIOS serial read back in the guest)")
    params = dict(ln.split() for ln in r.file("lockup-params.txt").read_text().splitlines())
    want = {"watchdog_thresh": "60", "softlockup_panic": "1",
            "softlockup_all_cpu_backtrace": "1", "panic_on_rcu_stall": "1",
            "rcu_cpu_stall_timeout": "60"}
    check(params == want, f"the kernel took the lockup parameters ({params})")
    bt = r.console[r.console.find("NMI backtrace for cpu 0"):]
    check("NMI backtrace for cpu 0" in r.console and "Call Trace:" in bt
          and "write_sysrq_trigger" in bt, "a CPU backtrace reaches the console (sysrq l)")

    # 3. Failure inside init before the script (here: results dir not reachable) -> VmFailure
    #    carrying the console log.
    try:
        qemu_run.run_vm(k, initrd, script, work / "badinit",
                     extra_cmdline="hucvm.results=/nonexistent-hucvm-dir", timeout_s=240)
        check(False, "init failure raises VmFailure")
    except VmFailure as e:
        check("HUCVM-FAIL: results dir /nonexistent-hucvm-dir" in str(e),
              "init failure raises VmFailure with the console log")

    # 4. A hung guest is killed at the hard timeout -> VmFailure, after it was asked for its
    #    stacks over the serial line (sysrq: every active CPU, blocked tasks).
    hang = work / "hang.sh"
    hang.write_text("#!/bin/sh\nsleep 100000\n")
    hang.chmod(0o755)
    t0 = time.monotonic()
    try:
        qemu_run.run_vm(k, initrd, hang, work / "hang", timeout_s=45)
        check(False, "hang raises VmFailure")
    except VmFailure as e:
        check("hung" in str(e) and time.monotonic() - t0 < 90,
              "hang raises VmFailure at the timeout")
        check("sysrq: Show backtrace of all active CPUs" in str(e)
              and "sysrq: Show Blocked State" in str(e),
              "the hung guest's stacks were asked for and are in the failure")

    print("PASS" if not failures else f"FAIL: {len(failures)} self-test(s)")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
