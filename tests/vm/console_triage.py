"""What a guest's serial console says about why it died or got stuck.

Two guest deaths are known artefacts of QEMU's TCG (not of anything under test), worth one more
boot; everything else is a failure, printed with the stacks that show why:

* "Oops: int3" at a site with no breakpoint: the kernel's int3-based live patching
  (text_poke_bp: static keys, kprobe events, ftrace) races across vCPUs, and a vCPU still runs a
  stale translation holding the int3 after the patch is complete (seen once, 6.12,
  ttwu_do_activate, while the reference's kprobe events were being enabled in the
  hardened_usercopy=off boot, where hucprof attaches nothing).
* A lockup (soft lockup, RCU stall) whose stacks sit in text_poke_bp / smp_call_function: one
  vCPU waits for the others to acknowledge a cross-CPU call during text patching, the same race
  from the other side.
* A jump to address 0 with interrupts off, at the entry of a function (the caller's return
  address on top of the stack): the same stray int3, hit at a function whose ftrace site carries
  a kprobe; x86's kprobe handler then "single-steps" that ftrace-based kprobe's instruction
  slot, which is NULL (seen in 6.12 at __virt_addr_valid, while hucprof attached with the
  reference's kprobe events registered; reproduced only under multi-threaded TCG and only with
  kprobes on the site: bench/vm/attach_race.py, tests/vm/README.md "A NULL RIP at attach").

With a BPF program, a BPF trampoline, the BPF machinery that runs them, or one of hucprof's probe
targets on any of the printed stacks, neither is ever a flake: that may be hucprof's doing.

A lockup with neither BPF nor cross-CPU patching frames is not retried either. Guests boot with
lockup thresholds far above anything host load causes (qemu_run.LOCKUP_CMDLINE: 60 s RCU stall,
120 s soft lockup), so a starved host does not produce these reports; one that appears anyway is
a real stall until someone shows otherwise, and its stacks are printed.

Python 3 standard library only; pure functions of the console text (tested on captured real
consoles by test_emulator_flake.py).
"""

from __future__ import annotations

import dataclasses
import re

# hucprof's probe targets (daemon/core/kernel/probe_targets.cpp), in its order.
PROBE_TARGETS = ["__check_object_size", "__check_heap_object", "find_vmap_area",
                 "check_heap_object", "__virt_addr_valid", "check_stack_object",
                 "check_kernel_text_object"]

# The first line of a report that the kernel thinks a CPU or task is stuck; the stacks follow.
LOCKUP_MARKERS = re.compile(
    r"BUG: soft lockup - CPU#\d+ stuck for \d+s!"
    r"|INFO: rcu_\w+ (?:self-)?detected stalls?"
    r"|rcu_\w+ kthread (?:starved|timer wakeup didn't happen)"
    r"|Watchdog detected hard LOCKUP")
OOPS_INT3 = "Oops: int3"
# The kernel fetching its next instruction from address 0: the report's first line, then the
# fault's kind and the registers (RIP 0, EFLAGS).
NULL_RIP = re.compile(r"BUG: kernel NULL pointer dereference, address: 0+\n"
                      r"(?:.*\n){0,12}?.*RIP: 0010:0x0\n(?:.*\n){0,3}?.*EFLAGS: ([0-9a-f]+)")
X86_EFLAGS_IF = 0x200
# A frame as the kernel prints it: "func+0x1f/0x80", "? func+0x1f/0x80", "RIP: 0010:func+...".
FRAME = re.compile(r"(?<![\w.])([A-Za-z_][\w.]*)\+0x[0-9a-f]+/0x[0-9a-f]+")
# BPF programs (bpf_prog_<tag>_<name>), trampolines (bpf_trampoline_<key>), what runs them
# (__bpf_prog_enter*, __bpf_tramp_*, trace_call_bpf, bpf_trace_run*) and attaches them
# (__sys_bpf, bpf_trampoline_update, bpf_arch_text_poke): "bpf" as a word of the name.
BPF_FRAME = re.compile(r"(?:^|_)bpf(?:_|$)")
# One CPU waiting in a cross-CPU call, as text patching does: text_poke_bp_batch (6.1, 6.12),
# smp_text_poke_* (6.16+), on_each_cpu_cond_mask, smp_call_function_many_cond.
CROSS_CPU_FRAME = re.compile(r"^(?:text_poke|smp_text_poke|smp_call_function|on_each_cpu)")
# How many console lines of a report a failure prints.
EVIDENCE_LINES = 160


@dataclasses.dataclass
class Verdict:
    kind: str            # "int3-oops", "null-rip-oops" or "lockup"
    retry: bool          # a known emulator artefact: boot once more
    summary: str         # one line
    bpf_frames: list[str]  # BPF / probe-target frames on the report's stacks (empty: none)
    evidence: str        # the report: the console from its first line, stacks included

    @property
    def ours(self) -> bool:
        return bool(self.bpf_frames)


def outcome(verdict: Verdict | None, finished: bool) -> str:
    """What the harness does with a boot: "retry" (a known artefact killed or stalled the guest:
    boot once more), "fail" (raise, with the report), "warn" (a report in a guest that went on
    to finish: logged, the guest's own result stands) or "judge" (nothing to say: the caller
    judges the guest's exit status, or its absence). `finished`: the guest wrote its exit
    status, whatever it was."""
    if verdict is None:
        return "judge"
    if not finished:
        return "retry" if verdict.retry else "fail"
    # A lockup with BPF on its stacks fails even when the guest got over it: a BPF program
    # that stalls a CPU for a minute is a bug whether or not the test noticed.
    return "fail" if verdict.kind == "lockup" and verdict.ours else "warn"


def frames(text: str) -> list[str]:
    """Function names of every stack frame and RIP in `text`, in order, with duplicates."""
    return FRAME.findall(text)


def _base(name: str) -> str:
    return name.split(".", 1)[0]  # compiler suffixes: .part.0, .isra.0, .constprop.0, .cold


def bpf_or_probe_frames(names: list[str]) -> list[str]:
    """The frames that make a report possibly hucprof's: BPF, or a probe target (distinct)."""
    targets = set(PROBE_TARGETS)
    out: list[str] = []
    for n in names:
        if (BPF_FRAME.search(n) or _base(n) in targets) and n not in out:
            out.append(n)
    return out


def _evidence(console: str, start: int) -> str:
    lines = console[start:].splitlines()
    more = len(lines) - EVIDENCE_LINES
    return "\n".join(lines[:EVIDENCE_LINES]) + (f"\n[... {more} more lines]" if more > 0 else "")


def triage(console: str) -> Verdict | None:
    """The verdict on the first lockup report, int3 Oops or jump to address 0 with interrupts
    off on a console; None when it holds none of them (an ordinary failure: the caller prints
    the console's tail)."""
    found = []
    if (lock := LOCKUP_MARKERS.search(console)) is not None:
        found.append((lock.start(), lambda: _lockup(console, lock)))
    if (oops := console.find(OOPS_INT3)) >= 0:
        found.append((oops, lambda: _int3(console, oops)))
    null = next((m for m in NULL_RIP.finditer(console)
                 if not int(m.group(1), 16) & X86_EFLAGS_IF), None)
    if null is not None:
        found.append((null.start(), lambda: _null_rip(console, null)))
    return min(found, key=lambda f: f[0])[1]() if found else None


def _lockup(console: str, m: re.Match) -> Verdict:
    report = console[m.start():]
    names = frames(report)
    ours = bpf_or_probe_frames(names)
    cross = [n for n in names if CROSS_CPU_FRAME.match(n)]
    what = m.group(0)
    if ours:
        summary = (f"{what}, with BPF or hucprof's probe targets on the stacks "
                   f"({', '.join(ours[:6])}): never an emulator artefact")
        return Verdict("lockup", False, summary, ours, _evidence(console, m.start()))
    if cross:
        summary = (f"{what} in {cross[0]} with no BPF frame (TCG cross-vCPU text patching)")
        return Verdict("lockup", True, summary, [], _evidence(console, m.start()))
    summary = (f"{what} with no BPF frame and no cross-CPU call on the stacks: not a known "
               "emulator artefact")
    return Verdict("lockup", False, summary, [], _evidence(console, m.start()))


def _int3(console: str, at: int) -> Verdict:
    oops = console[at:]
    ours = bpf_or_probe_frames(frames(oops))
    rip = re.search(r"RIP: 0010:(\S+)", oops)
    where = rip.group(1) if rip else "?"
    if ours:
        summary = (f"kernel Oops: int3 at {where} with BPF or hucprof's probe targets on the "
                   f"stack ({', '.join(ours[:6])}): never an emulator artefact")
        return Verdict("int3-oops", False, summary, ours, _evidence(console, at))
    return Verdict("int3-oops", True,
                   f"kernel Oops: int3 at {where} (TCG cross-vCPU text patching)", [],
                   _evidence(console, at))


def _null_rip(console: str, m: re.Match) -> Verdict:
    report = console[m.start():]
    trace = report.find("Call Trace:")
    caller = frames(report[trace:])[:1] if trace >= 0 else []
    ours = bpf_or_probe_frames(frames(report))
    where = (f"at the entry of a function called from {caller[0]}" if caller
             else "(no call trace)")
    what = (f"kernel jumped to address 0 with interrupts off (EFLAGS {m.group(1)}) {where}, "
            "the mark of a stray int3 at a kprobe'd ftrace site (tests/vm/README.md)")
    if ours:
        return Verdict("null-rip-oops", False,
                       f"{what}, with BPF or hucprof's probe targets on the stack "
                       f"({', '.join(ours[:6])}): never taken for an emulator artefact", ours,
                       _evidence(console, m.start()))
    return Verdict("null-rip-oops", True, f"{what} (TCG cross-vCPU text patching)", [],
                   _evidence(console, m.start()))
