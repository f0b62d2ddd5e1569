"""Booting a guest under QEMU: the accelerator (chosen once per process, by a probe boot), the
serial console, the hard timeout that asks a hung guest for its stacks, and the console's triage
(a known emulator artefact boots once more; a lockup with BPF on its stacks fails the run)."""

from __future__ import annotations

import dataclasses
import io
import os
import re
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import accel
import console_triage
import virtiofs
from initramfs import find_busybox, share_of, write_initramfs
from kernel_packages import Kernel
from vmlib import Skip, VmFailure, log

HERE = Path(__file__).resolve().parent
ACCEL_PROBE_INIT = HERE / "guest" / "accel_probe_init.sh"


def qemu_binary() -> str:
    path = shutil.which("qemu-system-x86_64")
    if path is None:
        raise Skip("qemu-system-x86_64 not installed")
    return path


def preflight() -> None:
    """Skip early (before downloading anything) if this machine cannot run the tier at all."""
    qemu_binary()
    find_busybox()
    if not Path("/proc/self").exists():
        raise Skip("no /proc")
    try:
        accel.override()
    except accel.AccelError as e:
        raise VmFailure(str(e)) from None


# --------------------------------------------------------------------------------------------
# QEMU
# --------------------------------------------------------------------------------------------

# Every guest boots so that a stuck CPU explains itself on the serial console, and the run ends
# then instead of at the hard timeout. A CPU that stops passing through RCU quiescent states
# (spinning with preemption or interrupts off, or waiting for one that does) is reported as an
# RCU stall after 60 s (rcu_cpu_stall_timeout), with the stalled CPUs' stacks, and panics
# (panic_on_rcu_stall); a soft lockup (watchdog_thresh=60: 120 s; an RCU stall report delays it)
# prints its stack and every other CPU's (softlockup_all_cpu_backtrace) and panics too. The panic
# prints every CPU's backtrace once more (panic_print=0x40), then panic=-1 and -no-reboot end
# qemu. loglevel=5 lets the backtraces through: they are printed at the default message level
# (4), which loglevel=4 hid. 60 s is far above what host load does to a healthy TCG guest (a vCPU
# thread descheduled for a minute), so a report is a real stall; console_triage judges it.
# sysrq_always_enabled: the hard timeout asks a hung guest for its stacks over the serial line.
LOCKUP_CMDLINE = ("loglevel=5 rcupdate.rcu_cpu_stall_timeout=60 sysctl.kernel.panic_on_rcu_stall=1 "
                  "watchdog_thresh=60 softlockup_panic=1 softlockup_all_cpu_backtrace=1 "
                  "panic_print=0x40 sysrq_always_enabled")
# How long the hard timeout waits for a hung guest's sysrq dump before killing qemu.
HANG_DUMP_S = 20
# The serial console on stdio through QEMU's multiplexer, whose escapes work on a pipe too:
# Ctrl-A b sends a serial break, and a key after a break is a magic sysrq: 9 = console loglevel
# 9 (so what follows is printed), l = backtrace of every active CPU, w = tasks in
# uninterruptible (D) state with their stacks.
SYSRQ_DUMP = [b"9", b"l", b"w"]
SERIAL_ON_STDIO = ["-nographic", "-monitor", "none", "-chardev", "stdio,id=con,mux=on,signal=off",
                   "-serial", "chardev:con"]

_accel_choice: accel.Choice | None = None


def _spawn(args: list[str]) -> subprocess.Popen:
    proc = subprocess.Popen(args, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                            stderr=subprocess.STDOUT, start_new_session=True)
    os.set_blocking(proc.stdout.fileno(), False)
    return proc


def _pump(proc: subprocess.Popen, sink, deadline: float, echo: bool = False,
          until: bytes | None = None, quiet_s: float | None = None) -> str:
    """Copy qemu's output to `sink` until qemu exits ("exited"), `until` appears ("marker"),
    `deadline` passes ("timeout") or nothing came for `quiet_s` seconds ("quiet")."""
    tail = b""
    last = time.monotonic()
    while True:
        chunk = proc.stdout.read(65536)
        if chunk:
            sink.write(chunk)
            sink.flush()
            last = time.monotonic()
            if echo:
                sys.stderr.buffer.write(chunk)
                sys.stderr.flush()
            if until is not None:
                tail = (tail + chunk)[-(len(until) + 65536):]
                if until in tail:
                    return "marker"
        elif proc.poll() is not None:
            sink.write(proc.stdout.read() or b"")
            return "exited"
        else:
            now = time.monotonic()
            if now > deadline:
                return "timeout"
            if quiet_s is not None and now - last > quiet_s:
                return "quiet"
            time.sleep(0.05)


def _kill(proc: subprocess.Popen) -> None:
    if proc.poll() is None:
        os.killpg(proc.pid, signal.SIGKILL)  # our own qemu's process group only
    proc.wait()


def _ask_for_stacks(proc: subprocess.Popen, sink, echo: bool) -> None:
    """A hung guest's every CPU's stack and blocked tasks onto the console (magic sysrq over
    the serial line), read for at most HANG_DUMP_S."""
    try:
        for key in SYSRQ_DUMP:
            proc.stdin.write(b"\x01b")
            proc.stdin.flush()
            time.sleep(0.5)
            proc.stdin.write(key)
            proc.stdin.flush()
            time.sleep(0.5)
    except OSError:
        return  # qemu went away meanwhile
    _pump(proc, sink, time.monotonic() + HANG_DUMP_S, echo=echo, quiet_s=3)


def probe_kvm_boot(qemu: str, k: Kernel) -> accel.ProbeResult:
    """Boot `k` with a marker-printing initramfs under -accel kvm, bounded by
    accel.PROBE_TIMEOUT_S; the console's last line (or qemu's error) says why when it fails."""
    initrd = k.cache_dir / "accel-probe.cpio"
    write_initramfs(initrd, ACCEL_PROBE_INIT, [], [])
    args = [qemu, *SERIAL_ON_STDIO, "-no-reboot", "-machine", "q35", "-accel", "kvm",
            "-cpu", "host", "-smp", "1", "-m", "256", "-nic", "none",
            "-kernel", str(k.vmlinuz), "-initrd", str(initrd),
            "-append", "console=ttyS0 panic=-1 loglevel=4 rdinit=/init"]
    out = io.BytesIO()
    t0 = time.monotonic()
    proc = _spawn(args)
    how = _pump(proc, out, t0 + accel.PROBE_TIMEOUT_S, until=accel.PROBE_MARKER.encode())
    seconds = time.monotonic() - t0
    _kill(proc)
    if how == "marker":
        return accel.ProbeResult(True, seconds, False, "")
    text = re.sub(r"\x1b\[[0-9;?]*[A-Za-z]|\x1bc", "", out.getvalue().decode(errors="replace"))
    lines = [ln.strip() for ln in text.splitlines() if ln.strip()]
    if how == "timeout":
        return accel.ProbeResult(False, seconds, True, f"its console ends with {lines[-1]!r}"
                                 if lines else "no console output")
    return accel.ProbeResult(False, seconds, False, f"qemu exited {proc.returncode}"
                             + (f": {lines[-1]}" if lines else ""))


def choose_accel(k: Kernel, device: Path = accel.KVM_DEVICE) -> accel.Choice:
    """accel.choose with this module's probe guest (`k`'s kernel)."""
    qemu = qemu_binary()
    try:
        return accel.choose(qemu, k.cache_dir, lambda: probe_kvm_boot(qemu, k), device)
    except accel.AccelError as e:
        raise VmFailure(str(e)) from None


def accelerator(k: Kernel) -> str:
    """The accelerator of every boot in this process: chosen once, logged once."""
    global _accel_choice
    if _accel_choice is None:
        _accel_choice = choose_accel(k)
        log(_accel_choice.line)
    return _accel_choice.accel


@dataclasses.dataclass
class RunResult:
    kernel: Kernel
    results_dir: Path
    console: str
    guest_rc: int | None
    accel: str               # "kvm" or "tcg"
    wall_s: float            # qemu start -> qemu exit
    boot_to_test_s: float | None  # guest uptime when the guest script started
    test_s: float | None     # guest script duration (guest clock)
    timed_out: bool

    def file(self, name: str) -> Path:
        return self.results_dir / name


def _tail(text: str, n=200) -> str:
    lines = text.splitlines()
    return "\n".join(lines[-n:])


class EmulatorFlake(VmFailure):
    """The guest kernel died of a known emulation artefact, not of anything under test."""


TCG_THREAD_ENV = "HUCVM_TCG_THREAD"


def tcg_thread_props() -> str:
    """-accel tcg properties for every guest: "thread=single" unless HUCVM_TCG_THREAD=multi.
    Multi-threaded TCG races with the kernel's cross-CPU text patching (ftrace sites rewritten
    at fentry/kprobe attach): 2 guest deaths in 684 site rewrites under it, 0 in 720
    single-threaded (bench/vm/attach_race.py)."""
    value = os.environ.get(TCG_THREAD_ENV, "single")
    if value not in ("single", "multi"):
        raise VmFailure(f"{TCG_THREAD_ENV}={value!r}: expected single or multi")
    return f"thread={value}"


def run_vm(k: Kernel, initrd: Path, script: Path, results_dir: Path, **kwargs) -> RunResult:
    """_run_vm_once, booted a second time after a known emulator artefact (console_triage: said
    loudly, and the first console kept next to the results as *.flake-console.log); any other
    failure is final."""
    try:
        return _run_vm_once(k, initrd, script, results_dir, **kwargs)
    except EmulatorFlake as e:
        first = results_dir.parent / (results_dir.name + ".console.log")
        kept = results_dir.parent / (results_dir.name + ".flake-console.log")
        if first.exists():
            first.replace(kept)
        log(f"RETRY {k.label} {results_dir.name}: {str(e).splitlines()[0]}; first console in "
            f"{kept}")
        return _run_vm_once(k, initrd, script, results_dir, **kwargs)


def _run_vm_once(k: Kernel, initrd: Path, script: Path, results_dir: Path, *,
                 extra_cmdline: str = "", env: dict[str, str] | None = None,
                 timeout_s: float = 420, cpus: int = 2, mem_mib: int = 1536,
                 qemu_args: list[str] | tuple[str, ...] = (), tcg_props: str | None = None,
                 echo_console: bool = False) -> RunResult:
    """Boot `k`, run `script` (an absolute host path, executed in the guest chroot), return.
    `qemu_args` are appended to qemu's command line (e.g. ["-icount", "shift=1,sleep=off"]);
    `tcg_props` to `-accel tcg` when the accelerator is TCG (e.g. "thread=single": one host
    thread runs every vCPU; a second -accel would only be a fallback, so it cannot go in
    qemu_args). By default every TCG guest runs single-threaded (tcg_thread_props(): multi-
    threaded TCG left stray int3s at ftrace sites being patched, which killed guests at fentry
    attach; tests/vm/README.md "A NULL RIP at attach").

    Raises VmFailure for boot failures, missing rc, timeout, or a lockup with BPF on its stacks;
    the console log (or the report's stacks) is included. A non-zero guest rc is *returned*
    (callers decide), not raised.
    """
    qemu = qemu_binary()
    script = script.resolve()
    results_dir = results_dir.resolve()
    if results_dir.exists():
        shutil.rmtree(results_dir)
    results_dir.mkdir(parents=True)
    # Guest environment travels as a file in the results dir (kernel cmdline is size-limited
    # and mangles quoting).
    env = dict(env or {})
    env.setdefault("HUCVM_KERNEL", k.label)
    env.setdefault("HUCVM_RELEASE", k.release)
    with open(results_dir / ".hucvm-env", "w") as f:
        for key, val in env.items():
            if not re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", key):
                raise ValueError(f"bad env name {key!r}")
            f.write(f"export {key}='" + val.replace("'", "'\\''") + "'\n")
    for p in (script, results_dir):
        if " " in str(p):
            raise ValueError(f"path with spaces not supported on the kernel cmdline: {p}")

    share = share_of(k)
    cmdline = (f"console=ttyS0 panic=-1 {LOCKUP_CMDLINE} rdinit=/init hucvm.share={share} "
               f"hucvm.script={script} hucvm.results={results_dir} {extra_cmdline}").strip()
    acc = accelerator(k)
    if tcg_props is None:
        tcg_props = tcg_thread_props()
    accel_arg = f"{acc},{tcg_props}" if tcg_props and acc == "tcg" else acc
    args = [qemu, *SERIAL_ON_STDIO, "-no-reboot",
            "-machine", "q35", "-accel", accel_arg, "-cpu", "host" if acc == "kvm" else "max",
            "-smp", str(cpus), "-m", str(mem_mib), "-nic", "none",
            "-kernel", str(k.vmlinuz), "-initrd", str(initrd), "-append", cmdline]
    if share == "9p":
        args += ["-virtfs", "local,path=/,mount_tag=hostroot,security_model=none,readonly=on,"
                            "multidevs=remap",
                 "-virtfs", f"local,path={results_dir},mount_tag=results,security_model=none,"
                            "multidevs=remap"]
    log(f"boot {k.label} ({k.release}, {accel_arg}, {cpus} vCPU, {mem_mib} MiB, {share}): "
        f"{script.name}"
        + (f" [{extra_cmdline}]" if extra_cmdline else "")
        + (f" qemu {' '.join(qemu_args)}" if qemu_args else ""))
    console_path = results_dir.parent / (results_dir.name + ".console.log")
    # Kernels without 9p see the same two directories over virtiofs, the root read-only.
    shares = virtiofs.Shares({"hostroot": (Path("/"), True), "results": (results_dir, False)}
                             if share == "virtiofs" else {}, mem_mib)
    t0 = time.monotonic()
    with shares, open(console_path, "wb") as con:
        proc = _spawn(args + shares.args + list(qemu_args))
        timed_out = _pump(proc, con, t0 + timeout_s, echo=echo_console) == "timeout"
        if timed_out:
            _ask_for_stacks(proc, con, echo_console)
        _kill(proc)
    wall = time.monotonic() - t0
    console = console_path.read_text(errors="replace")
    rc_file = results_dir / ".hucvm-rc"
    rc = int(rc_file.read_text().strip()) if rc_file.exists() else None

    def guest_float(name):
        p = results_dir / name
        try:
            return float(p.read_text().split()[0])
        except (OSError, ValueError, IndexError):
            return None

    start_up = guest_float(".hucvm-start-uptime")
    end_up = guest_float(".hucvm-end-uptime")
    res = RunResult(kernel=k, results_dir=results_dir, console=console, guest_rc=rc, accel=acc,
                    wall_s=wall, boot_to_test_s=start_up,
                    test_s=(end_up - start_up) if start_up is not None and end_up else None,
                    timed_out=timed_out)
    verdict = console_triage.triage(console)
    action = console_triage.outcome(verdict, finished=rc is not None)
    report = (f"--- {verdict.kind} report ({console_path}) ---\n{verdict.evidence}" if verdict
              else f"--- console ({console_path}) ---\n{_tail(console)}")
    if action == "retry":
        raise EmulatorFlake(f"{k.label}: {verdict.summary}\n{report}")
    if timed_out:
        raise VmFailure(f"{k.label}: guest hung: no poweroff within {timeout_s:.0f}s; "
                        + (verdict.summary if verdict else "stacks asked for by sysrq")
                        + f"\n{report}")
    if rc is None:
        why = re.findall(r"HUCVM-FAIL: .*", console)
        raise VmFailure(f"{k.label}: guest never reported an exit status "
                        f"(qemu rc={proc.returncode}; "
                        f"{verdict.summary if verdict else why[-1] if why else 'boot failure?'})"
                        f"\n{report}")
    if action == "fail":
        raise VmFailure(f"{k.label}: the guest finished (rc={rc}) but reported {verdict.summary}"
                        f"\n{report}")
    if action == "warn":
        log(f"WARNING {k.label} {results_dir.name}: the guest reported {verdict.summary}, and "
            f"finished anyway (rc={rc}); console in {console_path}")
    return res


def format_console(res: RunResult, n=200) -> str:
    return f"--- console {res.kernel.label} ---\n{_tail(res.console, n)}"


