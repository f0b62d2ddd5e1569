#!/usr/bin/env python3
"""console_triage on real consoles: which guest deaths qemu_run boots again (TCG text-patching
artefacts) and which fail with their stacks.

Real consoles (testdata/): the 6.12 guest that died of "Oops: int3" in ttwu_do_activate under
TCG; the 6.12 guest whose tasks jumped to address 0 at __virt_addr_valid's entry while hucprof
attached (a stray int3 at a kprobe'd ftrace site, bench/vm/attach_race.py); lockups of Debian's 6.1 and 6.12 kernels booted with the harness's own lockup parameters
(testdata/lockups/, captured by capture.py): a CPU waiting in text_poke_bp for one that spins
with interrupts off, a CPU spinning through __check_object_size with hucprof's fentry programs
attached, a CPU spinning with preemption off; a hung guest's sysrq dump. Synthetic variants put a
BPF program, a BPF trampoline or a probe target on the first kind's stacks (edits of the real
text, as a real one would read)."""

import re
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
sys.dont_write_bytecode = True
import console_triage as ct  # noqa: E402

DATA = HERE / "testdata"
LOCKUPS = DATA / "lockups"
failures = []


def check(cond: bool, what: str) -> None:
    print(("ok   " if cond else "FAIL ") + what)
    if not cond:
        failures.append(what)


def expect(name: str, console: str, retry: bool, ours: bool, mentions: list[str]) -> ct.Verdict:
    v = ct.triage(console)
    if v is None:
        check(False, f"{name}: a verdict")
        return v
    what = "retry" if retry else "fail"
    check(v.retry == retry and v.ours == ours,
          f"{name}: {what}{', BPF/probe frames' if ours else ''}: {v.summary}")
    for m in mentions:
        check(m in v.summary or m in v.bpf_frames, f"{name}: the verdict names {m}")
    check("Call Trace:" in v.evidence and len(v.evidence.splitlines()) <= ct.EVIDENCE_LINES + 1,
          f"{name}: the failure carries the report's stacks ({len(v.evidence.splitlines())} lines)")
    return v


# --- int3 Oops (real, 6.12) -----------------------------------------------------------------
int3 = (DATA / "console-6.12-oops-int3.txt").read_text()
v = expect("6.12 int3 Oops", int3, retry=True, ours=False, mentions=["ttwu_do_activate"])
check(v is not None and v.kind == "int3-oops", "the int3 Oops is judged as one")
ours = int3.replace(" sched_ttwu_pending+0xe3/0x180",
                    " bpf_prog_4f1c2a0b3c4d5e6f_huc_kprobe_check_object_size+0x1e2/0x3a0")
expect("6.12 int3 Oops with a BPF program on its stack", ours, retry=False, ours=True,
       mentions=["bpf_prog_4f1c2a0b3c4d5e6f_huc_kprobe_check_object_size"])
general = int3.replace("Oops: int3: 0000", "Oops: general protection fault: 0000")
check(ct.triage(general) is None, "a general protection fault is not a known artefact")
check(ct.triage("HUCVM-FAIL: mount /proc\n") is None, "an init failure is no verdict")

# --- jump to address 0 with interrupts off (real, 6.12) --------------------------------------
# Three tasks entered __virt_addr_valid from __check_object_size while hucprof attached its
# fentry programs with the reference's kprobe events registered on the same functions.
null = (DATA / "console-6.12-oops-null-rip.txt").read_text()
v = expect("6.12 NULL RIP at __virt_addr_valid's entry", null, retry=False, ours=True,
           mentions=["__check_object_size", "interrupts off", "kprobe'd ftrace site"])
check(v is not None and v.kind == "null-rip-oops" and ct.outcome(v, finished=False) == "fail",
      "the NULL-RIP Oops is judged as one, and a probe target on its stack fails the run")
elsewhere = re.sub(r"__check_object_size\+0x80/0x2c0", "do_sys_poll+0x80/0x2c0", null)
expect("the same Oops called from a function no probe watches", elsewhere, retry=True,
       ours=False, mentions=["do_sys_poll", "TCG"])
irq_on = null.replace("EFLAGS: 00000046", "EFLAGS: 00000246")
check(ct.triage(irq_on) is None,
      "a NULL function pointer called with interrupts on is an ordinary bug, no verdict")

# --- lockups (real, 6.1 and 6.12, captured with qemu_run.LOCKUP_CMDLINE) ------------------------
for k in ("6.1", "6.12"):
    ipi = (LOCKUPS / f"console-{k}-lockup-ipi.txt").read_text()
    v = expect(f"{k} CPU waiting in text_poke_bp for a CPU with interrupts off", ipi, retry=True,
               ours=False, mentions=[])
    check(v is not None and v.kind == "lockup"
          and re.search(r"in (?:text_poke|smp_call_function|on_each_cpu)", v.summary) is not None,
          f"{k}: the artefact verdict names the cross-CPU frame it found")
    check(ct.outcome(v, finished=False) == "retry" and ct.outcome(v, finished=True) == "warn",
          f"{k}: the artefact killed the guest: retry; the guest got over it: warn")

    check_ = (LOCKUPS / f"console-{k}-lockup-check.txt").read_text()
    v = expect(f"{k} CPU stuck in __check_object_size with hucprof's fentry programs", check_,
               retry=False, ours=True, mentions=["__check_object_size"])
    check(v is not None and any(ct.BPF_FRAME.search(f) for f in v.bpf_frames),
          f"{k}: ...and a BPF frame is named: {v.bpf_frames if v else None}")
    check(ct.outcome(v, finished=False) == "fail" and ct.outcome(v, finished=True) == "fail",
          f"{k}: BPF on a stuck stack fails, even in a guest that finished")

    spin = (LOCKUPS / f"console-{k}-lockup-spin.txt").read_text()
    v = expect(f"{k} CPU spinning with preemption off", spin, retry=False, ours=False,
               mentions=["not a known emulator artefact"])
    check(ct.outcome(v, finished=False) == "fail" and ct.outcome(v, finished=True) == "warn",
          f"{k}: an unexplained lockup fails a dead guest, is a warning in one that finished")

    # The artefact's consoles with hucprof's work on some stack: never retried.
    victim = re.search(r" (hucvm_spin_irqs_off\S*|hucvm_victim_work\S*)\+0x[0-9a-f]+/0x[0-9a-f]+",
                       ipi)
    check(victim is not None, f"{k}: the victim CPU's frame is in the ipi console")
    if victim:
        frame = victim.group(0)
        for name, repl in (
                ("a BPF program", " bpf_prog_9a1b2c3d4e5f6a7b_huc_fentry_check_object_size"
                                  "+0x5a/0x1a4"),
                ("a BPF trampoline", " bpf_trampoline_6442491234+0x4b/0x1000"),
                ("a probe target", " find_vmap_area+0x40/0xb0")):
            edited = ipi.replace(frame, repl)
            expect(f"{k} text_poke_bp lockup with {name} on the victim's stack", edited,
                   retry=False, ours=True, mentions=[repl.split("+")[0].strip()])

# --- a hung guest asked for its stacks (real sysrq dump): no lockup, no verdict --------------
hang = (LOCKUPS / "console-6.1-hang-sysrq.txt").read_text()
check("sysrq: Show backtrace of all active CPUs" in hang and "NMI backtrace" in hang,
      "the hang console holds a sysrq CPU backtrace")
check(ct.triage(hang) is None and ct.outcome(None, finished=False) == "judge",
      "a CPU backtrace without a lockup report is no verdict")

sys.exit(1 if failures else 0)
