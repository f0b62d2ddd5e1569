"""The VM tier's vocabulary: the workloads' sizes, the kernel reference's probes, what a boot runs
(Session, RunSpec), the rows a check yields, and reading one boot's results (RunContext)."""

from __future__ import annotations

import dataclasses
import re
import subprocess
from pathlib import Path
from typing import Callable

import histref
import hucprof_testlib as tl
import qemu_run
from console_triage import PROBE_TARGETS
from tier_kernels import KernelSpec


UDP_N = 1000
UDP_PAYLOAD = 64
NL_M = 100
NL_SIZE = 65536         # seed 001: a unicast netlink skb head > NLMSG_GOODSIZE
NL_BIG_M = 10
NL_BIG_SIZE = 6 << 20   # > KMALLOC_MAX_SIZE (4 MiB): kvmalloc must fall back to vmalloc
FLOOD_SECONDS = 5
FLOOD_SENDERS = 4       # more senders than the receiver can serve: the send side clearly leads
FLOOD_PAYLOAD = 64
SAMPLE_HZ = 999
INTERVAL = "500ms"
# The followed command (vm_tier_follow.py): a short flood, and a noise flood beside it that
# outlasts the recording (stopped once it ends).
FOLLOW_SECONDS = 2
FOLLOW_SENDERS = 1
NOISE_SECONDS = 300
MIN_FLOOD_SAMPLES = 20  # fewer usercopy samples than this and "top call site" means nothing
# The busy load (tcp_rr): more request/response pairs than CPUs, all on one vCPU, so that tasks
# enter checks while another one's run of the check's program is preempted there: the case in
# which the kernel skips the program and only counts it (tests/vm/README.md).
RR_PAIRS = 4
RR_N = 2000
RR_SIZE = 100
RR_CPU = 1      # the workload's vCPU (and the guest script's); the daemon keeps to the other one
HOUSE_CPU = 0

MEMLOCK_LIMIT = 32 << 20         # bytes, in --mode auto at 64 possible CPUs
MEMLOCK_PER_CPU_LIMIT = 64 << 10  # bytes per extra possible CPU

# Reference probes (guest/refprobe.sh ref_usercopy_probes): name -> probed kernel function.
PROBES = {"ucheck": "__check_object_size", "uheap": "__check_heap_object",
          "ustack": "check_stack_object", "uvmap": "find_vmap_area", "upage": "__virt_addr_valid"}
# Reference sub-check probe -> hucprof's usercopy_subchecks_total{check}.
# The kernel's own probe on each sub-check function -> the step label hucprof counts it under.
SUBCHECK_PROBES = {"uheap": "slab_object", "ustack": "stack_object", "uvmap": "vmap_area",
                   "upage": "virt_addr_valid"}
# A sub-check belongs to a usercopy check only when called from these (hucprof's BPF rule).
DISPATCHERS = frozenset({"__check_object_size", "check_heap_object"})
TARGETS = PROBE_TARGETS  # hucprof's, in its order (one list: the lockup triage needs it too)
LATENCY_TARGET = "__check_object_size:return"
# Recorded from the guest's kallsyms (kallsyms-usercopy.txt): the targets and their neighbours.
KALLSYMS_RECORDED = TARGETS + ["find_vm_area", "check_page_span"]

# Call sites (callsite, direction) a workload produces, and that nothing else in the guest
# touches while it runs: hucprof and the folded reference must agree on each of them.
UDP_SITES = [("udp_recvmsg", "to_user"), ("udp_sendmsg", "from_user"),
             ("__sys_recvfrom", "to_user"), ("__sys_sendto", "from_user")]
NETLINK_SITES = [("netlink_sendmsg", "from_user"), ("netlink_recvmsg", "to_user"),
                 ("__sys_sendto", "from_user")]


@dataclasses.dataclass
class Row:
    kernel: str
    run: str
    workload: str
    what: str
    expected: int | str | None    # None: reported, not asserted
    got: int | str | None
    note: str = ""

    @property
    def ok(self) -> bool:
        return self.expected is None or self.expected == self.got


@dataclasses.dataclass
class Workload:
    tag: str
    argv: list[str]
    reference: bool = False
    # A cgroup v2 child of the root the guest makes before the sessions start, for argv to run
    # in (tests/vm/workloads/in_cgroup.c); "" makes none.
    cgroup: str = ""
    cpus: list[int] | None = None  # the vCPUs it may run on (None: any)
    # bpftrace counts its slab checks by cache around it (guestlib.SlabRef; slab_object_rows)
    slab_ref: bool = False


@dataclasses.dataclass
class Session:
    name: str
    args: list[str]
    workloads: list[Workload]
    doctor: list[str] | None = None
    maps: bool = False  # record bpftool's map list and the daemon's map ids before stopping
    profile: bool = False  # save /debug/pprof/usercopy at the end (profile_rows)
    # The vCPUs the daemon and the guest script keep to while the session runs (None: any).
    cpus: list[int] | None = None
    # bpftool's list of the programs (run counts, recursion_misses) around each workload.
    progs: bool = False


@dataclasses.dataclass
class RunSpec:
    name: str
    extra_cmdline: str
    sessions: list[Session]
    check: Callable[["RunContext"], list[Row]]
    qemu_args: list[str] = dataclasses.field(default_factory=list)
    # Numbers a check measured, for rows that compare runs (memory growth per CPU).
    measured: dict = dataclasses.field(default_factory=dict)
    # `hucprof doctor` runs with these flags and nothing else (name -> flags): NAME-doctor.txt/.rc
    doctors: dict = dataclasses.field(default_factory=dict)
    # After the sessions: `hucprof record ARGS -- COMMAND` beside a NOISE workload, the kernel's
    # reference watching (guest/follow_record.py): {"args", "command", "noise"}; None: none.
    follow: dict | None = None


@dataclasses.dataclass
class Tools:
    hucprof: Path
    flood: Path
    fold: Path
    udp_pairs: Path
    netlink_self: Path
    in_cgroup: Path
    pprof: Path  # Google's pprof, built by tests/tools
    tcp_rr: Path


@dataclasses.dataclass
class RunContext:
    spec: KernelSpec
    run: RunSpec
    res: qemu_run.RunResult
    tools: Tools
    # Parsed result files by name: every row asks again, each file is read and parsed once.
    _parsed: dict = dataclasses.field(default_factory=dict, repr=False)

    def _once(self, key, parse):
        if key not in self._parsed:
            self._parsed[key] = parse()
        return self._parsed[key]

    def row(self, workload: str, what: str, expected, got, note: str = "") -> Row:
        return Row(self.spec.label, self.run.name, workload, what, expected, got, note)

    def text(self, name: str) -> str | None:
        p = self.res.file(name)
        return self._once(("text", name),
                          lambda: p.read_text(errors="replace") if p.exists() else None)

    def int_file(self, name: str) -> int | None:
        t = self.text(name)
        try:
            return int(t.strip()) if t is not None else None
        except ValueError:
            return None

    def metrics(self, name: str) -> list | None:
        t = self.text(name)
        return self._once(("metrics", name),
                          lambda: tl.parse_metrics(t) if t is not None else None)

    def hist(self, probe: str, tag: str) -> histref.Hist | None:
        p = self.res.file(f"hist-{probe}-{tag}.txt")
        return self._once(("hist", p.name),
                          lambda: histref.parse_file(p) if p.exists() else None)

    def delta(self, tag: str, name: str, **labels) -> int | None:
        """Rise of the sum of `name{labels}` over workload `tag` (session-workload)."""
        before, after = self.metrics(f"{tag}-before.txt"), self.metrics(f"{tag}-after.txt")
        if before is None or after is None:
            return None
        return round(tl.total(after, name, **labels) - tl.total(before, name, **labels))

    def ref_absent(self, probe: str) -> bool:
        """The reference did not probe `probe`: the kernel has no such function (ref-missing.txt),
        so nothing can have called it."""
        return any(line.split()[:1] == [probe]
                   for line in (self.text("ref-missing.txt") or "").splitlines())

    def count(self, probe, tag, what, expected, field="hitcount", note="", **sel) -> Row:
        """A phase-1 reference row: the kernel's own count for a stack selection (0 for a
        function the kernel does not have)."""
        h = self.hist(probe, tag)
        got = None if h is None else h.sum(field, probed=PROBES[probe], **sel)
        if h is None and self.ref_absent(probe):
            got = 0
            note = (note + "; " if note else "") + f"no {PROBES[probe]} in this kernel"
        elif h is None:
            note = (note + "; " if note else "") + f"no {PROBES[probe]} reference"
        return self.row(tag, f"kernel ref {PROBES[probe]}: {what}", expected, got, note)

    def ref_sites(self, probe: str, tag: str) -> dict[tuple[str, str], list[int]] | None:
        """The reference's stacks for `probe`, folded by hucprof's CallsiteFolder (hucvm_fold):
        (callsite, direction) -> [count, bytes]; direction "-" for sub-checks."""
        h = self.hist(probe, tag)
        if h is None:
            return None
        tsv = fold_reference(self.tools.fold, h, PROBES[probe], probe in SUBCHECK_PROBES)
        self.res.file(f"refsites-{probe}-{tag}.tsv").write_text(
            "# callsite\tsyscall\tdirection\tcount\tbytes (kernel reference, folded by "
            "hucprof's CallsiteFolder)\n" + tsv)
        out: dict[tuple[str, str], list[int]] = {}
        for (callsite, _syscall, direction), (count, nbytes) in parse_folded(tsv).items():
            acc = out.setdefault((callsite, direction), [0, 0])
            acc[0] += count
            acc[1] += nbytes
        return out


def fold_reference(fold: Path, h: histref.Hist, probed: str, subcheck: bool) -> str:
    """hucvm_fold's TSV (callsite, syscall, direction, count, bytes) for the reference's stacks
    of `probed`; a sub-check counts only when called from the check dispatcher, as in BPF."""
    lines = histref.fold_input(h, probed, callers_in=DISPATCHERS if subcheck else None,
                               direction_key=None if subcheck else "to_user")
    r = subprocess.run([str(fold)], input="\n".join(lines) + "\n", capture_output=True,
                       text=True)
    if r.returncode != 0:
        raise ValueError(f"hucvm_fold failed on {probed}: {r.stderr.strip()}")
    return r.stdout


def parse_folded(tsv: str) -> dict[tuple[str, str, str], tuple[int, int]]:
    out = {}
    for line in tsv.splitlines():
        callsite, syscall, direction, count, nbytes = line.split("\t")
        out[(callsite, syscall, direction)] = (int(count), int(nbytes))
    return out


def log_error_lines(text: str) -> list[str]:
    return [ln for ln in text.splitlines() if re.match(r"^\S+\s+(error|critical)\b", ln)]


