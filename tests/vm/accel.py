"""Which QEMU accelerator the VM tier uses: KVM only when a guest has been seen to boot under it.

A /dev/kvm that opens and answers KVM_GET_API_VERSION proves nothing: on a 2-core cloud VM with
nested virtualisation the device works, but a guest under it prints SeaBIOS's "Booting from
ROM..." and never gets further. So when /dev/kvm opens, a tiny guest (the tier's kernel and an
initramfs that prints a marker and powers off) is booted with -accel kvm, bounded at
PROBE_TIMEOUT_S; only if the marker appears is KVM used, otherwise TCG, with one log line saying
why. The verdict is kept in a file (one probe per run of ctest, which starts several processes)
keyed by what could change it: the host's boot, the /dev/kvm device node, the qemu binary.
HUCVM_ACCEL=tcg|kvm overrides all of it.

Python 3 standard library only.
"""

from __future__ import annotations

import dataclasses
import fcntl
import json
import os
import time
from pathlib import Path
from typing import Callable

ENV = "HUCVM_ACCEL"
KVM_DEVICE = Path("/dev/kvm")
PROBE_TIMEOUT_S = 20.0
PROBE_MARKER = "HUCVM-ACCEL-PROBE-OK"
CACHE_NAME = "accel.json"


class AccelError(Exception):
    """HUCVM_ACCEL is set to something unusable."""


@dataclasses.dataclass
class ProbeResult:
    booted: bool
    seconds: float
    timed_out: bool  # still running at the bound (else booted, or qemu exited on its own)
    detail: str      # why not (the console's last line, qemu's error), or "" when booted


@dataclasses.dataclass
class Choice:
    accel: str   # "kvm" or "tcg"
    line: str    # the one log line: what was chosen, why, probed or cached


def override() -> str | None:
    """HUCVM_ACCEL's value ("tcg", "kvm"), None when unset; AccelError when anything else."""
    value = os.environ.get(ENV, "").strip()
    if not value:
        return None
    if value not in ("tcg", "kvm"):
        raise AccelError(f"{ENV}={value!r}: expected tcg or kvm (or unset: probe)")
    return value


def _device_error(device: Path) -> str | None:
    try:
        os.close(os.open(device, os.O_RDWR | os.O_CLOEXEC))
        return None
    except OSError as e:
        return f"cannot open {device}: {e.strerror}"


def cache_key(device: Path, qemu: str) -> dict:
    """Changes with a host reboot, a recreated /dev/kvm, another or upgraded qemu binary."""
    dev = os.stat(device)
    exe = os.stat(qemu)
    return {"boot_id": Path("/proc/sys/kernel/random/boot_id").read_text().strip(),
            "device": f"{device} rdev={dev.st_rdev} ino={dev.st_ino} ctime={dev.st_ctime_ns}",
            "qemu": f"{os.path.realpath(qemu)} size={exe.st_size} mtime={exe.st_mtime_ns}"}


def _verdict(r: ProbeResult, device: Path) -> tuple[str, str]:
    if r.booted:
        return "kvm", f"kvm: a probe guest booted under KVM in {r.seconds:.1f} s; using kvm"
    within = f"in {PROBE_TIMEOUT_S:.0f} s" if r.timed_out else "under KVM"
    return "tcg", f"kvm: {device} present but a probe guest did not boot {within} ({r.detail}); " \
                  "using tcg"


def choose(qemu: str, cache_dir: Path, probe: Callable[[], ProbeResult],
           device: Path = KVM_DEVICE) -> Choice:
    """The accelerator for this run. `probe` boots the probe guest under KVM (called at most
    once per cache key, under a lock, so concurrent processes do not probe twice)."""
    forced = override()
    if forced == "tcg":
        return Choice("tcg", f"accel: {ENV}=tcg; using tcg (no probe)")
    if forced == "kvm":
        err = _device_error(device)
        if err:
            raise AccelError(f"{ENV}=kvm but {err}")
        return Choice("kvm", f"accel: {ENV}=kvm; using kvm (no probe)")
    if not device.exists():
        return Choice("tcg", f"kvm: no {device}; using tcg")
    err = _device_error(device)
    if err:
        return Choice("tcg", f"kvm: {err}; using tcg")

    key = cache_key(device, qemu)
    cache_dir.mkdir(parents=True, exist_ok=True)
    path = cache_dir / CACHE_NAME
    with open(cache_dir / (CACHE_NAME + ".lock"), "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        cached = _read(path)
        if cached and cached.get("key") == key:
            when = time.strftime("%H:%M:%S", time.localtime(cached["at"]))
            accel, line = _verdict(ProbeResult(**cached["result"]), device)
            return Choice(accel, f"{line} (cached: probed at {when} this host boot; "
                                 f"delete {path} to probe again)")
        r = probe()
        tmp = path.with_suffix(".tmp")
        tmp.write_text(json.dumps({"key": key, "result": dataclasses.asdict(r),
                                   "at": time.time()}, indent=1))
        tmp.rename(path)
    accel, line = _verdict(r, device)
    return Choice(accel, f"{line} (probed now; verdict cached in {path})")


def _read(path: Path) -> dict | None:
    """The cached verdict, None when absent or unreadable (then the probe runs again)."""
    try:
        data = json.loads(path.read_text())
        ProbeResult(**data["result"])
        float(data["at"])
        return data
    except (OSError, ValueError, TypeError, KeyError):
        return None
