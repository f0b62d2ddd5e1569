"""perf's kernel stacks, classified by hucprof's sampling rule, as the reference for it.

The rule (docs/design.md, "Sampling mode"): scanning a sampled kernel stack from the leaf, the first check
dispatcher frame (__check_object_size, check_heap_object) within 24 frames makes the sample the
check's cost, unless interrupt entry code came first: then an interrupt, exception or softirq ran
on top of the check, and the sample is kernel CPU, excluded from the check. Interrupt entry code
is what /proc/kallsyms brackets with __irqentry_text_start/_end and __softirqentry_text_start/
_end, and the functions and name prefixes below. This module applies that rule on its own (perf's
symbol names, kallsyms' addresses), so hucprof's BPF and C++ side are checked against it, never
against themselves."""

import re
import subprocess

SCAN_DEPTH = 24
# perf's sampling event when it is the reference for hucprof's sampler: the same cpu-clock
# hrtimer hucprof samples. perf's default is the cycles hardware event wherever the machine has a
# PMU: an NMI that also lands where interrupts are off and weighs CPUs by cycles, not time, so a
# disagreement would be the two clocks', not the classification's.
PERF_CLOCK = ["-e", "cpu-clock"]
DISPATCHERS = {"__check_object_size", "check_heap_object"}
SECTIONS = [("__irqentry_text_start", "__irqentry_text_end"),
            ("__softirqentry_text_start", "__softirqentry_text_end")]
ENTRY_FUNCTIONS = {
    "__do_softirq", "handle_softirqs", "do_softirq_own_stack", "__irq_exit_rcu", "irq_exit_rcu",
    "irq_exit", "el1h_64_sync", "el1h_64_sync_handler", "el1h_64_irq", "el1h_64_irq_handler", "el1h_64_fiq", "el1h_64_fiq_handler",
    "el1h_64_error", "el1h_64_error_handler", "el1_interrupt", "call_on_irq_stack",
    "asm_fred_entrypoint_kernel", "fred_entry_from_kernel"}
ENTRY_PREFIXES = ("asm_sysvec_", "asm_common_interrupt", "asm_spurious_interrupt", "asm_exc_")
_SUFFIX = re.compile(r"\.(part|isra|constprop|cold|llvm|lto_priv)(\.\d+)?.*$")


def normalize(name):
    return _SUFFIX.sub("", name)


class KernelSymbols:
    """Text symbols of a kallsyms-format file: name -> first address, and the sections."""

    def __init__(self, path="/proc/kallsyms"):
        self.address = {}
        with open(path) as f:
            for line in f:
                parts = line.split()
                if len(parts) >= 3 and parts[1] in "tTwW":
                    self.address.setdefault(parts[2], int(parts[0], 16))
        self.sections = [(self.address[a], self.address[b]) for a, b in SECTIONS
                         if a in self.address and b in self.address
                         and self.address[b] > self.address[a]]

    def in_section(self, addr):
        return any(start <= addr < end for start, end in self.sections)


def is_interrupt_entry(addr, name, symbols):
    if addr is not None and symbols.in_section(addr):
        return True
    if addr is None and name in symbols.address and symbols.in_section(symbols.address[name]):
        return True
    return normalize(name) in ENTRY_FUNCTIONS or name.startswith(ENTRY_PREFIXES)


def classify(frames, symbols, depth=SCAN_DEPTH):
    """frames: [(address or None, name)], leaf first. 'check', 'interrupt_in_check' or
    'outside'."""
    interrupted = False
    for addr, name in frames[:depth]:
        if normalize(name) in DISPATCHERS:
            return "interrupt_in_check" if interrupted else "check"
        if not interrupted and is_interrupt_entry(addr, name, symbols):
            interrupted = True
    return "outside"


def first_check_index(names):
    """Index of the first check dispatcher frame (names leaf first), or None."""
    for i, name in enumerate(names):
        if normalize(name) in DISPATCHERS:
            return i
    return None


def perf_kernel_stacks(perf_data, perf="perf"):
    """Every sample as (pid, kernel frames [(address, name)], leaf first); a sample taken in user
    mode has no kernel frames, one in the idle task has pid 0."""
    out = subprocess.run([perf, "script", "-i", perf_data, "-F", "pid,ip,sym"],
                         capture_output=True, text=True, check=True).stdout
    samples = []
    for block in out.split("\n\n"):
        lines = block.strip("\n").splitlines()
        if not lines or not lines[0].strip().isdigit():
            continue
        pid, frames = int(lines[0]), []
        for line in lines[1:]:
            parts = line.split()
            if len(parts) < 2:
                continue
            try:
                addr = int(parts[0], 16)
            except ValueError:
                continue
            if addr < 0xffff000000000000:
                break  # user space from here on
            frames.append((addr, parts[1]))
        samples.append((pid, frames))
    return samples
