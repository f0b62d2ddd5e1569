#!/usr/bin/env python3
"""The accelerator choice (accel.py, qemu_run.choose_accel) without a real guest: qemu is replaced by
testdata/fake-qemu-nested-kvm (KVM boots print "Booting from ROM..." and hang, as nested KVM did
on the machine of issue 8) and by two more fakes (qemu refuses KVM; a KVM guest boots), /dev/kvm
by plain files. Asserted: TCG with the reason whenever a probe guest does not boot, within the
bound, with no fake qemu left running; one probe per cache key across calls; HUCVM_ACCEL wins.
Exit 0 pass, 1 fail, 77 skip (no static busybox to build the probe's initramfs)."""

import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.dont_write_bytecode = True
HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
import accel  # noqa: E402
import initramfs  # noqa: E402
import kernel_packages  # noqa: E402
import qemu_run  # noqa: E402
import vmlib  # noqa: E402

HANGS = HERE / "testdata" / "fake-qemu-nested-kvm"
failures = []


def check(cond: bool, what: str) -> None:
    print(("ok   " if cond else "FAIL ") + what, flush=True)
    if not cond:
        failures.append(what)


def fake(bindir: Path, target: Path) -> None:
    """`target` becomes the qemu-system-x86_64 that vmlib finds first in PATH."""
    link = bindir / "qemu-system-x86_64"
    link.unlink(missing_ok=True)
    link.symlink_to(target)


def script(path: Path, body: str) -> Path:
    path.write_text("#!/bin/sh\n" + body)
    path.chmod(0o755)
    return path


def probes(log: Path) -> list[str]:
    return log.read_text().splitlines() if log.exists() else []


def alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
        return True
    except ProcessLookupError:
        return False


def main() -> int:
    try:
        initramfs.find_busybox()
    except vmlib.Skip as e:
        print(f"SKIP: {e}")
        return vmlib.SKIP
    tmp = Path(tempfile.mkdtemp(prefix="hucvm-accel-test-"))
    try:
        return run(tmp)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def run(tmp: Path) -> int:
    bindir = tmp / "bin"
    bindir.mkdir()
    log = tmp / "fake-qemu.log"
    os.environ["PATH"] = f"{bindir}:{os.environ['PATH']}"
    os.environ["HUCVM_FAKE_QEMU_LOG"] = str(log)
    os.environ.pop(accel.ENV, None)
    accel.PROBE_TIMEOUT_S = 3.0  # the bound under test, shorter than the real 20 s
    k = kernel_packages.Kernel(label="fake", meta_package="-", package="-",
                     root=tmp / "cache" / "linux-image-fake", release="0")
    kvm = tmp / "kvm"
    kvm.write_text("")
    hangs = tmp / HANGS.name  # a copy: its mtime is part of the cache key, changed below
    shutil.copy2(HANGS, hangs)
    fake(bindir, hangs)

    # The wrapper passes everything but a KVM boot to the real qemu (with-fake-kvm.sh needs it).
    v = subprocess.run(["qemu-system-x86_64", "--version"], capture_output=True, text=True)
    check(v.returncode == 0 and "QEMU emulator version" in v.stdout,
          f"fake qemu runs the real one for non-KVM use: {v.stdout.splitlines()[:1]}")

    c = qemu_run.choose_accel(k, tmp / "no-such-kvm")
    check(c.accel == "tcg" and "no " in c.line and not probes(log),
          f"no /dev/kvm: tcg, no probe: {c.line}")
    c = qemu_run.choose_accel(k, tmp)  # a directory: open(O_RDWR) fails
    check(c.accel == "tcg" and "cannot open" in c.line and not probes(log),
          f"/dev/kvm that does not open: tcg, no probe: {c.line}")

    t0 = time.monotonic()
    c = qemu_run.choose_accel(k, kvm)
    took = time.monotonic() - t0
    runs = probes(log)
    check(c.accel == "tcg", f"KVM guest stuck at the BIOS: tcg: {c.line}")
    check("present but a probe guest did not boot in 3 s" in c.line
          and "Booting from ROM..." in c.line and "probed now" in c.line,
          "the log line says why (the bound, the console's last line) and that it probed")
    check(3.0 <= took < 10.0, f"the probe is bounded ({took:.1f} s for a 3 s bound)")
    check(len(runs) == 1 and "-accel kvm" in runs[0], f"one probe boot, under KVM ({len(runs)})")
    pid = int(runs[0].split()[0]) if runs else 0
    check(pid > 0 and not alive(pid), f"the hung probe qemu (pid {pid}) was killed")
    check((k.cache_dir / accel.CACHE_NAME).is_file(), "the verdict is kept in the cache dir")

    t0 = time.monotonic()
    c = qemu_run.choose_accel(k, kvm)
    check(c.accel == "tcg" and "cached" in c.line and len(probes(log)) == 1
          and time.monotonic() - t0 < 2, f"second choice (another process) is cached: {c.line}")

    os.utime(hangs, (time.time() + 5, time.time() + 5))  # an upgraded qemu binary: a new key
    c = qemu_run.choose_accel(k, kvm)
    check(c.accel == "tcg" and "probed now" in c.line and len(probes(log)) == 2,
          "a changed qemu binary is probed again")

    refuses = script(tmp / "qemu-refuses", "echo 'qemu-system-x86_64: Could not access KVM kernel "
                     "module: Permission denied' >&2\necho 'qemu-system-x86_64: failed to "
                     "initialize kvm: Permission denied' >&2\nexit 1\n")
    fake(bindir, refuses)
    t0 = time.monotonic()
    c = qemu_run.choose_accel(k, kvm)
    check(c.accel == "tcg" and "did not boot under KVM (qemu exited 1: " in c.line
          and "Permission denied" in c.line
          and time.monotonic() - t0 < 3, f"qemu refusing KVM: tcg at once, its error: {c.line}")

    boots = script(tmp / "qemu-boots", f"echo 'Booting from ROM...'\necho '{accel.PROBE_MARKER}'"
                   "\nsleep 100000\n")
    fake(bindir, boots)
    c = qemu_run.choose_accel(k, kvm)
    check(c.accel == "kvm" and "booted under KVM" in c.line, f"a KVM guest that boots: {c.line}")

    fake(bindir, hangs)
    os.utime(hangs, (time.time() + 10, time.time() + 10))
    n = len(probes(log))
    for value, want in (("tcg", "tcg"), ("kvm", "kvm")):
        os.environ[accel.ENV] = value
        c = qemu_run.choose_accel(k, kvm)
        check(c.accel == want and f"{accel.ENV}={value}" in c.line and len(probes(log)) == n,
              f"{accel.ENV}={value} wins, no probe: {c.line}")
    os.environ[accel.ENV] = "kvm"
    try:
        qemu_run.choose_accel(k, tmp / "no-such-kvm")
        check(False, f"{accel.ENV}=kvm without a usable device fails")
    except vmlib.VmFailure as e:
        check(accel.ENV in str(e) and "no-such-kvm" in str(e),
              f"{accel.ENV}=kvm without a usable device fails, naming both: {e}")
    os.environ[accel.ENV] = "yes"
    try:
        qemu_run.preflight()
        check(False, f"{accel.ENV}=yes is refused")
    except vmlib.VmFailure as e:
        check(f"{accel.ENV}='yes'" in str(e) and "tcg or kvm" in str(e),
              f"{accel.ENV}=yes is refused before any boot: {e}")
    os.environ.pop(accel.ENV)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
