#!/usr/bin/env python3
"""VM tier: boot Debian's own kernels under QEMU and prove hucprof's probe mode exact against the
kernel's own counts.

Per kernel (Debian 12's 6.1 and 6.12; trixie's 6.12 and the newest of trixie-backports and sid,
through private apt lists) three boots, each running guest/hucprof_guest.py with a plan:

  fentry   `hucprof run --mode probe --probe.attach fentry` and, at the same time, the kernel-only
           reference (kprobe events + hist triggers keyed on the stack, guest/refprobe.sh) on
           exactly N UDP send/recv pairs and M netlink messages (64 KiB: seed 001's vmalloc path
           on 6.1; 6 MiB on 6.12, where a 64 KiB skb head no longer comes from vmalloc). hucprof's
           counters must rise by exactly N/M per call site, and equal the reference's stacks
           folded by hucprof's own CallsiteFolder (tests/vm/fold_tool.cpp); sub-checks are
           classified inside the check's program (the default --probe.subchecks classify) and
           must equal the kernel's own sub-check calls per call site. Then once more with
           --latency (fexit) and --probe.subchecks attach (a probe per sub-check): the duration
           histogram counts N, the slab sub-check N.
  kprobe   the same with --probe.attach kprobe, plus a UDP flood under probe mode and under
           `--mode sample`: both must name the same top call site.
  hardened_usercopy=off
           the checks are off: hucprof reports usercopy_hardened_enabled 0, attaches nothing,
           counts nothing, exits 0 at SIGTERM with no error line; doctor says so, and what the
           kernel still runs of a check; the reference sees N __check_object_size calls before
           6.15 (early return) and none from 6.15 (the static key moved to the call site), and
           no sub-checks.
Every session: `hucprof doctor` with the session's flags said what `run` then did.
  memory-Ncpus (6.1)
           `hucprof run --mode auto` on a guest with 2 vCPUs but N possible CPUs (-smp
           2,maxcpus=N; N = 2, 64, 128): the memlock bpftool shows for the maps the daemon holds
           stays <= 32 MiB and grows <= 64 KiB per possible CPU, and hucprof_bpf_map_memory_bytes
           names the same maps with the same total.

Usage: vm_tier.py BUILD_DIR [--kernel LABEL | --all]
                  [--run fentry|kprobe|hardened_usercopy=off|memory-64cpus] [-v]
Exit: 0 pass, 1 fail, 77 skip (ctest SKIP_RETURN_CODE).
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import re
import subprocess
import sys
import time
from pathlib import Path
from typing import Callable

sys.dont_write_bytecode = True  # keep the source tree clean
HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(HERE.parent / "lib"))
import hucprof_testlib as tl  # noqa: E402
import histref  # noqa: E402
import initramfs  # noqa: E402
import kernel_packages  # noqa: E402
import qemu_run  # noqa: E402
import vmlib  # noqa: E402
from console_triage import PROBE_TARGETS  # noqa: E402
from vmlib import Skip, VmFailure, log  # noqa: E402

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
MIN_FLOOD_SAMPLES = 20  # fewer usercopy samples than this and "top call site" means nothing


@dataclasses.dataclass
class KernelSpec:
    label: str
    meta_package: str
    # Does a 64 KiB unicast netlink skb head come from vmalloc? 6.1: always (vmalloc in
    # netlink_alloc_large_skb). 6.12: kvmalloc -> the page allocator satisfies an order-4
    # request in a fresh guest, so no vmalloc; the 6 MiB variant is the vmalloc path there.
    netlink_64k_vmalloc: bool
    # Possible-CPU counts the memory runs boot with (none: no memory runs on this kernel).
    memory_cpus: tuple[int, ...] = ()
    # The Debian suite it comes from through a private apt list (kernel_packages.PRIVATE_SUITES); None:
    # the machine's own apt sources (Debian 12).
    suite: str | None = None
    # Booted by ctest's vm_tier (CI); the others by the full documented command (--all).
    ci: bool = True


# 6.1 is where the per-CPU growth was measured (its memlock is max_entries x entry size, so it
# shows the reservation, not just what is in use). The newest kernels are whatever the suites
# carry the day the tier runs (linux-image-amd64 of trixie-backports and sid): the tables name
# the release. CI boots the newest of all (trixie-backports) besides Debian 12's; trixie's 6.12
# and sid's kernel only with --all (budget in tests/vm/README.md).
KERNELS = [
    KernelSpec("6.1", "linux-image-amd64", netlink_64k_vmalloc=True, memory_cpus=(2, 64, 128)),
    KernelSpec("6.12", "linux-image-6.12-amd64", netlink_64k_vmalloc=False),
    KernelSpec("trixie", "linux-image-amd64", netlink_64k_vmalloc=False, suite="trixie",
               ci=False),
    KernelSpec("trixie-backports", "linux-image-amd64", netlink_64k_vmalloc=False,
               suite="trixie-backports"),
    KernelSpec("sid", "linux-image-amd64", netlink_64k_vmalloc=False, suite="sid", ci=False),
]


def boot_files(label: str, cache: Path) -> tuple[kernel_packages.Kernel, Path]:
    """One kernel of KERNELS ready to boot, for scripts that boot a single kernel (bench/vm/):
    its package (downloaded into `cache` the first time) and its initramfs. KeyError for a label
    not in KERNELS (argparse's choices=[k.label for k in KERNELS] keeps it out); vmlib.Skip when
    the host lacks what it takes."""
    spec = {k.label: k for k in KERNELS}[label]
    k = kernel_packages.resolve_kernel(spec.label, spec.meta_package, cache, {}, suite=spec.suite)
    initrd = cache / f"initramfs-{k.release}.cpio"
    initramfs.build_initramfs(k, initrd)
    return k, initrd


MEMLOCK_LIMIT = 32 << 20         # bytes, in --mode auto at 64 possible CPUs
MEMLOCK_PER_CPU_LIMIT = 64 << 10  # bytes per extra possible CPU

# Reference probes (guest/refprobe.sh ref_usercopy_probes): name -> probed kernel function.
PROBES = {"ucheck": "__check_object_size", "uheap": "__check_heap_object",
          "ustack": "check_stack_object", "uvmap": "find_vmap_area", "upage": "__virt_addr_valid"}
# Reference sub-check probe -> hucprof's usercopy_subchecks_total{check}.
SUBCHECK_PROBES = {"uheap": "slab", "ustack": "stack", "uvmap": "vmalloc", "upage": "page"}
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


@dataclasses.dataclass
class Session:
    name: str
    args: list[str]
    workloads: list[Workload]
    doctor: list[str] | None = None
    maps: bool = False  # record bpftool's map list and the daemon's map ids before stopping
    profile: bool = False  # save /debug/pprof/usercopy at the end (profile_rows)


@dataclasses.dataclass
class RunSpec:
    name: str
    extra_cmdline: str
    sessions: list[Session]
    check: Callable[["RunContext"], list[Row]]
    qemu_args: list[str] = dataclasses.field(default_factory=list)
    # Numbers a check measured, for rows that compare runs (memory growth per CPU).
    measured: dict = dataclasses.field(default_factory=dict)


@dataclasses.dataclass
class Tools:
    hucprof: Path
    flood: Path
    fold: Path
    udp_pairs: Path
    netlink_self: Path
    pprof: Path  # Google's pprof, built by tests/tools


# ---------------------------------------------------------------------------------------------
# Reading a run's results
# ---------------------------------------------------------------------------------------------

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

    def count(self, probe, tag, what, expected, field="hitcount", note="", **sel) -> Row:
        """A phase-1 reference row: the kernel's own count for a stack selection."""
        h = self.hist(probe, tag)
        got = None if h is None else h.sum(field, probed=PROBES[probe], **sel)
        if h is None:
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


# ---------------------------------------------------------------------------------------------
# Checks
# ---------------------------------------------------------------------------------------------

DOCTOR_VERDICT = re.compile(r"^verdict: `hucprof run --mode \S+` (will run|cannot start): (.*)$",
                            re.M)
RUN_VERDICT = re.compile(r" running: (.*)$", re.M)


def doctor_rows(c: RunContext, s: Session) -> list[Row]:
    """doctor, given the session's flags, said what `run` then did: its verdict comes from
    loading the very programs run loads, so the two cannot disagree (sub-check method
    included). Also where it read the kernel config: where the package installs it."""
    text = c.text(f"{s.name}-doctor.txt") or ""
    doctor = DOCTOR_VERDICT.search(text)
    ran = RUN_VERDICT.search(c.text(f"{s.name}-daemon.log") or "")
    rows = [c.row(s.name, "doctor's verdict (same flags) = what run did",
                  f"will run: {doctor.group(2)}" if doctor and doctor.group(1) == "will run"
                  else (doctor.group(0) if doctor else "a verdict line"),
                  f"will run: {ran.group(1)}" if ran else None,
                  f"doctor rc {c.int_file(f'{s.name}-doctor.rc')}")]
    installed = (c.text(".hucvm-kernel-config") or "").strip()
    config = re.search(r"^  kernel config +(yes|no) +(.*)$", text, re.M)
    if installed.startswith("installed"):
        rows.append(c.row(s.name, "doctor read the kernel config where the package installs it",
                          f"yes {c.res.kernel.config_install_path}",
                          " ".join(config.groups()) if config else None))
    else:
        rows.append(c.row(s.name, "kernel config in the guest", None, installed or None,
                          "doctor's row: " + (" ".join(config.groups()) if config else "n/a")))
    return rows


def session_rows(c: RunContext, s: Session, expect_start=True) -> list[Row]:
    """The daemon started, ran every workload, exited 0 at SIGTERM with no error line; every
    workload exited 0; every reference hist is complete and missed no kprobe hit; doctor said
    what run did."""
    rows = doctor_rows(c, s) if s.doctor is not None else []
    err = c.text(f"{s.name}-error.txt")
    rows.append(c.row(s.name, "hucprof served, attached and drained through every workload",
                      1, int(err is None) if c.text(f"{s.name}-ready.txt") else 0,
                      (err or "").strip().splitlines()[0][:160] if err else ""))
    rows.append(c.row(s.name, "hucprof exit status at SIGTERM", 0,
                      c.int_file(f"{s.name}-daemon.rc")))
    logtext = c.text(f"{s.name}-daemon.log")
    errors = log_error_lines(logtext) if logtext is not None else None
    rows.append(c.row(s.name, "error lines in the hucprof log", 0,
                      None if errors is None else len(errors),
                      errors[0][:160] if errors else ""))
    for w in s.workloads:
        tag = f"{s.name}-{w.tag}"
        rows.append(c.row(tag, "workload exit status", 0, c.int_file(f"{tag}-workload.rc")))
        if not w.reference:
            continue
        dropped = 0
        for probe in PROBES:
            h = c.hist(probe, tag)
            if h is not None:
                dropped += h.totals.get("Dropped", 0)
        rows.append(c.row(tag, "kernel ref: hist entries dropped (all probes)", 0, dropped))
        prof = c.text(f"kprobe_profile-{tag}.txt")
        missed = None
        if prof is not None:
            missed = sum(int(p[2]) for p in (ln.split() for ln in prof.splitlines())
                         if len(p) == 3 and p[0] in PROBES)
        rows.append(c.row(tag, "kernel ref: kprobe misses (all probes)", 0, missed))
    return rows


def present_symbols(c: RunContext) -> set[str]:
    """Targets that exist as real (attachable) symbols: exact or a suffixed clone, not .cold."""
    names = set()
    for line in (c.text("kallsyms-usercopy.txt") or "").splitlines():
        parts = line.split()
        if len(parts) == 2 and ".cold" not in parts[1]:
            names.add(re.sub(r"\..*$", "", parts[1]))
    return names


# Sub-check functions that --probe.subchecks classify counts inside __check_object_size's program.
CLASSIFIED_TARGETS = {"__check_heap_object", "find_vmap_area", "__virt_addr_valid",
                      "check_stack_object"}


def classified(ready, target: str) -> bool:
    return any("--probe.subchecks classify" in labels.get("reason", "")
               for labels, _ in tl.select(ready, "hucprof_probe_unavailable_info", target=target))


def attach_rows(c: RunContext, s: Session, mode: str, extra_targets=()) -> list[Row]:
    ready = c.metrics(f"{s.name}-ready.txt")
    present = present_symbols(c)
    rows = []
    for target in TARGETS + list(extra_targets):
        exists = target.split(":")[0] in present
        if ready is None:
            rows.append(c.row(s.name, f"probe {target}", "scrape", None, "no metrics"))
        elif exists and target in CLASSIFIED_TARGETS and classified(ready, target):
            # --probe.subchecks classify: counted inside the check's program, not probed; the
            # exactness rows compare those counts with the kernel's own.
            rows.append(c.row(s.name, f"{target}: not probed, classified in the check", 0,
                              round(tl.total(ready, "hucprof_probe_attached", target=target))))
        elif exists:
            rows.append(c.row(s.name, f"hucprof_probe_attached{{{target},mode={mode}}}", 1,
                              round(tl.total(ready, "hucprof_probe_attached", target=target,
                                             mode=mode))))
        else:
            why = tl.select(ready, "hucprof_probe_unavailable_info", target=target)
            rows.append(c.row(s.name, f"{target} (no symbol): hucprof_probe_unavailable_info",
                              1, len(why), why[0][0].get("reason", "") if why else ""))
    if ready is not None:
        rows.append(c.row(s.name, "usercopy_hardened_enabled", 1,
                          round(tl.total(ready, "usercopy_hardened_enabled"))))
    return rows


def subcheck_method_row(c: RunContext, s: Session, method: str) -> Row:
    """How the session counts sub-checks, as it exports it (hucprof_probe_subchecks_info): where
    it is not the one asked for, the reason says why (a fallback is used and said)."""
    ready = c.metrics(f"{s.name}-ready.txt")
    info = tl.select(ready, "hucprof_probe_subchecks_info") if ready is not None else []
    return c.row(s.name, "hucprof_probe_subchecks_info{method}", method,
                 info[0][0].get("method") if info else None,
                 info[0][0].get("reason", "")[:200] if info else "")


def caller_rows(c: RunContext, tag: str) -> list[Row]:
    """The immediate caller was always read, and nothing was lumped into callsite="other"."""
    after = c.metrics(f"{tag}-after.txt")
    others = ""
    if after is not None:
        nz = [(l.get("reason"), v) for l, v in tl.select(after, "hucprof_dropped_total") if v]
        others = ", ".join(f"{r}={v:g}" for r, v in nz)
    return [c.row(tag, "hucprof_dropped_total{caller_unreadable} (since start)", 0,
                  None if after is None else round(tl.total(after, "hucprof_dropped_total",
                                                            reason="caller_unreadable")),
                  f"non-zero drops: {others}" if others else ""),
            c.row(tag, 'usercopy_checks_total{callsite="other"} rise', 0,
                  c.delta(tag, "usercopy_checks_total", callsite="other")),
            c.row(tag, 'usercopy_subchecks_total{callsite="other"} rise', 0,
                  c.delta(tag, "usercopy_subchecks_total", callsite="other")),
            # A caller read that gave data instead of a return address (fixed in
            # huc_fentry_caller), or a site whose short stack was not in the drain (fixed in
            # ProbeSession::drain).
            c.row(tag, 'usercopy_checks_total{callsite="[unknown]"} rise', 0,
                  c.delta(tag, "usercopy_checks_total", callsite="[unknown]")),
            c.row(tag, 'usercopy_subchecks_total{callsite="[unknown]"} rise', 0,
                  c.delta(tag, "usercopy_subchecks_total", callsite="[unknown]"))]


def compare_rows(c: RunContext, tag: str, sites: list[tuple[str, str]]) -> list[Row]:
    """hucprof's per-call-site counts == the kernel reference folded by CallsiteFolder."""
    rows = []
    ref = c.ref_sites("ucheck", tag)
    for callsite, direction in sites:
        # A missing reference hist is a failure (expected "ref"), never a silent skip.
        r = ref.get((callsite, direction), [0, 0]) if ref is not None else ["ref", "ref"]
        rows.append(c.row(tag, f"usercopy_checks_total{{{callsite},{direction}}} += ref", r[0],
                          c.delta(tag, "usercopy_checks_total", callsite=callsite,
                                  direction=direction),
                          "" if ref is not None else "no reference hist"))
        rows.append(c.row(tag, f"usercopy_check_bytes_total{{{callsite},{direction}}} += ref",
                          r[1],
                          c.delta(tag, "usercopy_check_bytes_total", callsite=callsite,
                                  direction=direction)))
    callsites = sorted({cs for cs, _ in sites})
    for probe, kind in SUBCHECK_PROBES.items():
        ref_sub = c.ref_sites(probe, tag)
        for callsite in callsites:
            want = "ref" if ref_sub is None else ref_sub.get((callsite, "-"), [0, 0])[0]
            got = c.delta(tag, "usercopy_subchecks_total", callsite=callsite, check=kind)
            if want == 0 and got == 0:
                continue  # asserted, not printed: the table lists what ran
            rows.append(c.row(tag, f"usercopy_subchecks_total{{{callsite},{kind}}} += ref",
                              want, got, "" if ref_sub is not None else
                              f"no {PROBES[probe]} reference"))
    return rows


def helper_walk_rows(c: RunContext, tag: str, n=UDP_N) -> list[Row]:
    """Probe mode's cost claim: each UDP pair has 3 helper-called checks (ip_generic_getfrag,
    move_addr_to_kernel, move_addr_to_user); their call sites must come from learned stack
    offsets, not from a stack walk per call (bpf/learned_offsets.bpf.h)."""
    learned = c.delta(tag, "hucprof_probe_helper_calls_total", method="learned_offsets")
    walked = c.delta(tag, "hucprof_probe_helper_calls_total", method="stack_walk")
    return [c.row(tag, f"hucprof_probe_helper_calls_total{{learned_offsets}} rise >= {3 * n}", 1,
                  None if learned is None else int(learned >= 3 * n), f"rise {learned}"),
            c.row(tag, "hucprof_probe_helper_calls_total{stack_walk} rise", 0, walked),
            c.row(tag, "hucprof_probe_offset_mismatches_total rise", 0,
                  c.delta(tag, "hucprof_probe_offset_mismatches_total"))]


def rise_row(c: RunContext, tag: str, name: str, expected, note: str = "", **labels) -> Row:
    """The rise of name{labels} over workload `tag` is `expected`; shown as name{label values}."""
    return c.row(tag, f"{name}{{{','.join(labels.values())}}}", expected,
                 c.delta(tag, name, **labels), note)


def udp_rows(c: RunContext, tag: str, n=UDP_N, p=UDP_PAYLOAD) -> list[Row]:
    """hucprof's own counts for exactly n UDP pairs."""
    rows = []
    for callsite, direction in (("udp_recvmsg", "to_user"), ("udp_sendmsg", "from_user")):
        rows += [rise_row(c, tag, "usercopy_checks_total", n, callsite=callsite,
                          direction=direction),
                 rise_row(c, tag, "usercopy_check_bytes_total", n * p, callsite=callsite,
                          direction=direction)]
    rows.append(rise_row(c, tag, "usercopy_checks_total", n, "syscall label",
                         callsite="udp_recvmsg", syscall="recvfrom", direction="to_user"))
    for callsite in ("udp_recvmsg", "udp_sendmsg"):
        rows.append(rise_row(c, tag, "usercopy_subchecks_total", n, callsite=callsite,
                             check="slab"))
    return rows + caller_rows(c, tag) + helper_walk_rows(c, tag, n)


def checks_off_entered(c: RunContext) -> bool:
    """With hardened_usercopy=off, is __check_object_size still entered? Before 6.15 it is (it
    returns at its bypass_usercopy_checks key); since 6.15 check_object_size() tests the
    validate_usercopy_range key first and never calls it (include/linux/ucopysize.h)."""
    return c.res.kernel.version() < (6, 15)


def udp_ref_rows(c: RunContext, tag: str, hardened: bool) -> list[Row]:
    """The kernel reference itself counted exactly N (phase 1): otherwise equality means little.
    With the checks off the check is entered N times or never, by kernel version."""
    n, p = UDP_N, UDP_PAYLOAD
    sub = n if hardened else 0
    entered = n if hardened or checks_off_entered(c) else 0
    note = "" if hardened else ("entered, returns at once (before 6.15)" if entered
                                else "not entered (6.15+)")
    return [
        c.count("ucheck", tag, "udp_recvmsg to_user calls", entered, note=note,
                contains=["udp_recvmsg"], to_user=1),
        c.count("ucheck", tag, "udp_recvmsg to_user bytes", entered * p, "n",
                contains=["udp_recvmsg"], to_user=1),
        c.count("ucheck", tag, "udp_sendmsg from_user calls", entered, contains=["udp_sendmsg"],
                to_user=0),
        c.count("ucheck", tag, "  of which caller ip_generic_getfrag<-__ip_append_data", entered,
                caller="ip_generic_getfrag", contains=["__ip_append_data", "ip_make_skb",
                                                       "udp_sendmsg"], to_user=0),
        c.count("uheap", tag, "slab check from udp_recvmsg", sub, contains=["udp_recvmsg"],
                to_user=1),
        c.count("uheap", tag, "slab check from udp_sendmsg", sub, contains=["udp_sendmsg"],
                to_user=0),
        c.count("ustack", tag, "stack check from move_addr_to_user (recvfrom)", sub,
                contains=["move_addr_to_user", "__sys_recvfrom"]),
        c.count("uvmap", tag, "vmalloc check from udp", 0,
                contains=["__check_object_size", "udp_recvmsg"]),
    ]


def netlink_rows(c: RunContext, tag: str, m: int, size: int, vmalloc: bool) -> list[Row]:
    exp_v = m if vmalloc else 0
    note = "vmalloc'ed skb head" if vmalloc else "kvmalloc: head from the page allocator"
    return [
        c.count("ucheck", tag, "netlink_sendmsg from_user calls", m, contains=["netlink_sendmsg"],
                to_user=0),
        c.count("uvmap", tag, "vmalloc check from netlink_sendmsg", exp_v, note=note,
                contains=["__check_object_size", "netlink_sendmsg"]),
        c.count("uvmap", tag, "vmalloc check from netlink_recvmsg", exp_v, note=note,
                contains=["__check_object_size", "netlink_recvmsg"]),
        rise_row(c, tag, "usercopy_checks_total", m, callsite="netlink_sendmsg",
                 direction="from_user"),
        rise_row(c, tag, "usercopy_check_bytes_total", m * size, callsite="netlink_sendmsg",
                 direction="from_user"),
        rise_row(c, tag, "usercopy_checks_total", m, callsite="netlink_recvmsg",
                 direction="to_user"),
        rise_row(c, tag, "usercopy_subchecks_total", exp_v, note, callsite="netlink_sendmsg",
                 check="vmalloc"),
        rise_row(c, tag, "usercopy_subchecks_total", exp_v, note, callsite="netlink_recvmsg",
                 check="vmalloc"),
    ] + caller_rows(c, tag)


def per_callsite(samples_before, samples_after, name) -> dict[str, float]:
    out: dict[str, float] = {}
    for labels, v in tl.select(samples_after, name):
        out[labels.get("callsite", "")] = out.get(labels.get("callsite", ""), 0) + v
    for labels, v in tl.select(samples_before, name):
        out[labels.get("callsite", "")] = out.get(labels.get("callsite", ""), 0) - v
    return out


def top_callsite(c: RunContext, tag: str, name: str, tiebreak: str | None = None):
    before, after = c.metrics(f"{tag}-before.txt"), c.metrics(f"{tag}-after.txt")
    if before is None or after is None:
        return None, {}
    primary = per_callsite(before, after, name)
    second = per_callsite(before, after, tiebreak) if tiebreak else {}
    if not primary or max(primary.values()) <= 0:
        return None, primary
    top = max(primary, key=lambda cs: (primary[cs], second.get(cs, 0)))
    return top, primary


def flood_rows(c: RunContext, probe_tag: str, sample_tag: str) -> list[Row]:
    """Sampling puts the flood's check CPU where probe mode counts the flood's payload copies.

    Samples measure CPU time and probe mode counts calls, and a check's cost per call differs by
    call site and kernel, so the two need not rank udp_sendmsg and udp_recvmsg alike. What must
    hold on every kernel is that the two call sites copying the 64-byte payloads (probe mode's
    top two by bytes) take most of the check's samples, far ahead of the 16-byte address copies
    beside them; a half leaves room for many sigma of sampling noise (tests/vm/README.md)."""
    ptop, pcounts = top_callsite(c, probe_tag, "usercopy_checks_total",
                                 "usercopy_check_bytes_total")
    _, pbytes = top_callsite(c, probe_tag, "usercopy_check_bytes_total")
    stop, scounts = top_callsite(c, sample_tag, "usercopy_cpu_samples_total")
    fmt = lambda d: ", ".join(f"{k}={v:g}" for k, v in sorted(d.items(), key=lambda kv: -kv[1])[:4])  # noqa: E731,E501
    in_checks = round(sum(v for v in scounts.values())) if scounts else None
    payload_sites = sorted(pbytes, key=lambda cs: -pbytes[cs])[:2]
    in_payload = sum(scounts.get(cs, 0) for cs in payload_sites)
    return [
        c.row(probe_tag, "probe mode: top call site by usercopy_checks_total", None, ptop,
              fmt(pcounts)),
        c.row(probe_tag, "probe mode: the two call sites copying the most bytes", None,
              " ".join(sorted(payload_sites)) or None, fmt(pbytes)),
        c.row(sample_tag, "sample mode: usercopy_cpu_samples_total in checks >= "
              f"{MIN_FLOOD_SAMPLES}", 1, None if in_checks is None
              else int(in_checks >= MIN_FLOOD_SAMPLES), f"{in_checks} samples"),
        c.row(sample_tag, "sample mode: probe mode's two payload call sites take > 1/2 of "
              "the samples", 1,
              int(len(payload_sites) == 2 and bool(in_checks) and 2 * in_payload > in_checks),
              f"{in_payload:g} of {in_checks}; {fmt(scounts)}"),
        c.row(sample_tag, "top call site is a UDP call site", 1,
              int(stop in ("udp_sendmsg", "udp_recvmsg"))),
    ]


# ---------------------------------------------------------------------------------------------
# Runs
# ---------------------------------------------------------------------------------------------

def workloads(spec: KernelSpec, tools: Tools) -> list[Workload]:
    w = [Workload("udp", [str(tools.udp_pairs), str(UDP_N), str(UDP_PAYLOAD)], reference=True),
         Workload("netlink64k", [str(tools.netlink_self), str(NL_M), str(NL_SIZE)],
                  reference=True)]
    if not spec.netlink_64k_vmalloc:
        w.append(Workload("netlinkbig", [str(tools.netlink_self), str(NL_BIG_M),
                                         str(NL_BIG_SIZE)], reference=True))
    return w


def flood(tools: Tools) -> Workload:
    return Workload("flood", [str(tools.flood), "--seconds", str(FLOOD_SECONDS), "--payload",
                              str(FLOOD_PAYLOAD), "--senders", str(FLOOD_SENDERS)])


def pprof_raw_calls(pprof: Path, profile: Path) -> dict[str, int]:
    """Calls per callsite label of a profile, as Google's pprof reads it (`pprof -raw`)."""
    r = subprocess.run([str(pprof), "-raw", str(profile)], capture_output=True, text=True,
                       timeout=120)
    if r.returncode != 0:
        raise ValueError(f"pprof -raw {profile.name}: {r.stderr.strip()}")
    lines = r.stdout.split("Samples:\n", 1)[1].split("\nLocations", 1)[0].splitlines()
    types = [t.replace("[dflt]", "").split("/")[0] for t in lines[0].split()]
    calls: dict[str, int] = {}
    values = None
    for line in lines[1:]:
        m = re.match(r"^\s*(\d+(?:\s+\d+)*):", line)
        if m:
            values = [int(v) for v in m.group(1).split()]
            continue
        label = re.search(r"callsite:\[([^\]]*)\]", line)
        if label and values is not None:
            n = values[types.index("calls")]
            calls[label.group(1)] = calls.get(label.group(1), 0) + n
            values = None
    return calls


def profile_rows(c: RunContext, s: Session) -> list[Row]:
    """The session's cumulative profile (/debug/pprof/usercopy, read by Google's pprof) holds
    exactly the calls of usercopy_checks_total, per call site, scraped from the same drain."""
    tag = f"{s.name}-profile"
    path, metrics = c.res.file(f"{tag}.pb.gz"), c.metrics(f"{tag}-metrics.txt")
    if not path.exists() or metrics is None:
        return [c.row(tag, "profile saved with a scrape of the same drain", 1, 0)]
    if not c.tools.pprof.exists():
        return [c.row(tag, "Google's pprof built (tests/tools)", 1, 0, str(c.tools.pprof))]
    from_profile = pprof_raw_calls(c.tools.pprof, path)
    from_metrics: dict[str, int] = {}
    for labels, v in tl.select(metrics, "usercopy_checks_total"):
        from_metrics[labels["callsite"]] = from_metrics.get(labels["callsite"], 0) + round(v)
    rows = [c.row(tag, "calls in the profile, all call sites (= usercopy_checks_total)",
                  sum(from_metrics.values()), sum(from_profile.values()))]
    for callsite in sorted(set(from_metrics) | set(from_profile)):
        rows.append(c.row(tag, f"profile calls{{callsite={callsite}}} = /metrics",
                          from_metrics.get(callsite, 0), from_profile.get(callsite, 0)))
    return rows


def exactness_rows(c: RunContext, s: Session) -> list[Row]:
    rows = []
    for w in s.workloads:
        tag = f"{s.name}-{w.tag}"
        if w.tag == "udp":
            rows += udp_ref_rows(c, tag, hardened=True) + udp_rows(c, tag)
            rows += compare_rows(c, tag, UDP_SITES)
        elif w.tag == "netlink64k":
            rows += netlink_rows(c, tag, NL_M, NL_SIZE, c.spec.netlink_64k_vmalloc)
            rows += compare_rows(c, tag, NETLINK_SITES)
        elif w.tag == "netlinkbig":
            rows += netlink_rows(c, tag, NL_BIG_M, NL_BIG_SIZE, True)
            rows += compare_rows(c, tag, NETLINK_SITES)
    return rows


# Exactness per call site needs every call site named: with the default --top-k 20 a call site
# that is new while 20 others are already ranked (the guest has more: the daemon's own bpf(), 9p,
# tracefs writes, ...) is counted under callsite="other" until its cumulative count overtakes the
# 20th, and a counter never takes back what "other" got (e.g. the first 2 of 100 netlink_sendmsg
# checks on 6.12). 1000 is the largest --top-k; the rows below assert "other" stays still.
DAEMON_ARGS = ["--interval", INTERVAL, "--top-k", "1000"]


def probe_run(spec: KernelSpec, tools: Tools, mode: str) -> RunSpec:
    base = DAEMON_ARGS
    probe = Session("probe", ["--mode", "probe", "--probe.attach", mode] + base,
                    workloads(spec, tools) + ([flood(tools)] if mode == "kprobe" else []),
                    doctor=["--mode", "probe", "--probe.attach", mode], profile=True)
    sessions = [probe]
    if mode == "fentry":
        # --latency once per kernel: fexit on top of fentry (the trampoline then also calls the
        # original and keeps a return-value slot: the caller read must still be right).
        # --probe.subchecks attach here: the probe session covers the default (classify), this
        # one a probe at each sub-check's entry (udp_rows: slab counted N times).
        latency = ["--mode", "probe", "--probe.attach", mode, "--latency", "--probe.subchecks",
                   "attach"]
        sessions.append(Session("latency", latency + base,
                                [Workload("udp", [str(tools.udp_pairs), str(UDP_N),
                                                  str(UDP_PAYLOAD)])], doctor=latency))
    else:
        sessions.append(Session("sample", ["--mode", "sample", "--sample-frequency",
                                           str(SAMPLE_HZ)] + base, [flood(tools)],
                                doctor=["--mode", "sample"]))

    def check(c: RunContext) -> list[Row]:
        rows = session_rows(c, probe) + attach_rows(c, probe, mode) + exactness_rows(c, probe)
        rows.append(subcheck_method_row(c, probe, "classified"))
        rows += profile_rows(c, probe)
        for s in sessions[1:]:
            rows += session_rows(c, s)
        if mode == "fentry":
            tag = "latency-udp"
            rows += attach_rows(c, sessions[1], mode, [LATENCY_TARGET])
            rows.append(subcheck_method_row(c, sessions[1], "probed"))
            rows += [c.row(tag, "usercopy_check_duration_seconds_count{udp_recvmsg}", UDP_N,
                           c.delta(tag, "usercopy_check_duration_seconds_count",
                                   callsite="udp_recvmsg"))]
            rows += udp_rows(c, tag)
        else:
            rows += flood_rows(c, "probe-flood", "sample-flood")
        return rows
    return RunSpec(mode, "", sessions, check)


def hardened_off_run(spec: KernelSpec, tools: Tools) -> RunSpec:
    off = Session("off", ["--mode", "probe"] + DAEMON_ARGS,
                  [Workload("udp", [str(tools.udp_pairs), str(UDP_N), str(UDP_PAYLOAD)],
                            reference=True)],
                  doctor=["--mode", "probe"])

    def check(c: RunContext) -> list[Row]:
        tag = "off-udp"
        cmdline = (c.text("cmdline.txt") or "").split()
        ready, after = c.metrics("off-ready.txt"), c.metrics(f"{tag}-after.txt")
        doctor = c.text("off-doctor.txt") or ""
        reason = ""
        if ready is not None:
            why = tl.select(ready, "hucprof_probe_unavailable_info", target="__check_object_size")
            reason = why[0][0].get("reason", "") if why else ""
        rows = [c.row("-", "guest saw hardened_usercopy=off", 1,
                      int("hardened_usercopy=off" in cmdline))]
        rows += session_rows(c, off)
        rows += [
            c.row("off", "usercopy_hardened_enabled", 0,
                  None if ready is None else round(tl.total(ready, "usercopy_hardened_enabled"))),
            c.row("off", "hucprof_probe_attached{__check_object_size} (any mode)", 0,
                  None if ready is None else round(tl.total(ready, "hucprof_probe_attached",
                                                            target="__check_object_size")),
                  reason),
            c.row(tag, "usercopy_checks_total (all series) rise over N UDP pairs", 0,
                  c.delta(tag, "usercopy_checks_total")),
            c.row(tag, "usercopy_checks_total (all series) since start", 0,
                  None if after is None else round(tl.total(after, "usercopy_checks_total"))),
            c.row(tag, "usercopy_hardened_enabled after the workload", 0,
                  None if after is None else round(tl.total(after, "usercopy_hardened_enabled"))),
            c.row("off", "doctor says what the checks-off kernel still runs of a check",
                  "still enters" if checks_off_entered(c) else "does not enter",
                  next((w for w in ("still enters", "does not enter") if w in doctor), None),
                  next((ln.strip() for ln in doctor.splitlines() if ln.startswith("note:")), "")),
            c.row("off", "hucprof doctor says the checks are off", 1,
                  int(bool(re.search(r"checks are off", doctor))),
                  next((ln.strip() for ln in doctor.splitlines()
                        if ln.strip().startswith("hardened usercopy")), "")),
        ]
        rows += udp_ref_rows(c, tag, hardened=False)
        return rows
    return RunSpec("hardened_usercopy=off", "hardened_usercopy=off", [off], check)


def daemon_maps(c: RunContext, session: str) -> tuple[dict[str, int], dict[str, int]] | None:
    """(bpftool: map name -> memlock, hucprof_bpf_map_memory_bytes: map -> bytes) for the maps
    the daemon held; None when the guest recorded nothing."""
    listing, ids, scrape = (c.text(f"{session}-maps.json"), c.text(f"{session}-map-ids.txt"),
                            c.metrics(f"{session}-maps-metrics.txt"))
    if not listing or ids is None or scrape is None:
        return None
    held = {int(x) for x in ids.split()}
    bpftool: dict[str, int] = {}
    for m in json.loads(listing):
        if m["id"] in held:
            bpftool[m["name"]] = bpftool.get(m["name"], 0) + int(m["bytes_memlock"])
    ours = {labels["map"]: round(v) for labels, v in
            tl.select(scrape, "hucprof_bpf_map_memory_bytes")}
    return bpftool, ours


def memory_run(spec: KernelSpec, tools: Tools, possible: int) -> RunSpec:
    auto = Session("auto", ["--mode", "auto"] + DAEMON_ARGS,
                   [Workload("udp", [str(tools.udp_pairs), str(UDP_N), str(UDP_PAYLOAD)])],
                   maps=True)
    run = RunSpec(f"memory-{possible}cpus", "", [auto], lambda c: [])

    def check(c: RunContext) -> list[Row]:
        rows = session_rows(c, auto)
        cpus = (c.text("possible-cpus.txt") or "").strip()
        rows.append(c.row("-", "guest's possible CPUs", f"0-{possible - 1}", cpus or None))
        maps = daemon_maps(c, auto.name)
        if maps is None:
            rows.append(c.row("auto", "BPF maps recorded (bpftool, daemon's map ids)", 1, 0))
            return rows
        bpftool, ours = maps
        total = sum(bpftool.values())
        run.measured["memlock"] = total
        big = ", ".join(f"{k}={v >> 10} KiB" for k, v in
                        sorted(bpftool.items(), key=lambda kv: -kv[1])[:4])
        rows += [
            c.row("auto", f"memlock of the daemon's BPF maps (bpftool) <= {MEMLOCK_LIMIT >> 20} "
                  "MiB", 1, int(total <= MEMLOCK_LIMIT), f"{total / 2**20:.2f} MiB; {big}"),
            c.row("auto", "hucprof_bpf_map_memory_bytes names the maps bpftool lists", 1,
                  int(sorted(bpftool) == sorted(ours)),
                  f"{len(bpftool)} maps" + "".join(
                      f"; {side} only: {', '.join(sorted(names))}" for side, names in
                      (("bpftool", set(bpftool) - set(ours)), ("hucprof", set(ours) - set(bpftool)))
                      if names)),
            c.row("auto", "sum of hucprof_bpf_map_memory_bytes == bpftool's memlock", total,
                  sum(ours.values())),
            rise_row(c, "auto-udp", "usercopy_checks_total", UDP_N, callsite="udp_recvmsg",
                     direction="to_user"),
        ]
        return rows
    run.check = check
    run.qemu_args = ["-smp", f"2,maxcpus={possible}"]
    return run


def memory_growth_rows(kernel: str, runs: list[RunSpec]) -> list[Row]:
    """Memlock growth per extra possible CPU between consecutive memory runs."""
    measured = sorted((int(r.name.split("-")[1].removesuffix("cpus")), r.measured["memlock"])
                      for r in runs if r.name.startswith("memory-") and "memlock" in r.measured)
    rows = []
    for (a, ta), (b, tb) in zip(measured, measured[1:]):
        per_cpu = (tb - ta) / (b - a)
        rows.append(Row(kernel, "memory", f"{a}->{b} cpus",
                        f"memlock growth per possible CPU <= {MEMLOCK_PER_CPU_LIMIT >> 10} KiB",
                        1, int(per_cpu <= MEMLOCK_PER_CPU_LIMIT),
                        f"{per_cpu / 1024:.1f} KiB/CPU ({ta / 2**20:.2f} -> {tb / 2**20:.2f} MiB)"))
    return rows


def runs_for(spec: KernelSpec, tools: Tools) -> list[RunSpec]:
    return ([probe_run(spec, tools, "fentry"), probe_run(spec, tools, "kprobe"),
             hardened_off_run(spec, tools)]
            + [memory_run(spec, tools, n) for n in spec.memory_cpus])


def plan_json(run: RunSpec, tools: Tools) -> str:
    return json.dumps({"hucprof": str(tools.hucprof), "kallsyms": KALLSYMS_RECORDED,
                       "sessions": [dataclasses.asdict(s) for s in run.sessions]})


# ---------------------------------------------------------------------------------------------

def print_table(rows: list[Row]) -> None:
    hdr = ("kernel", "run", "workload", "check", "expected", "got", "")
    data = [(r.kernel, r.run, r.workload, r.what,
             "-" if r.expected is None else str(r.expected),
             "n/a" if r.got is None else str(r.got),
             ("ok" if r.expected is not None else "info") if r.ok else "FAIL")
            + ((f"  ({r.note})",) if r.note else ("",)) for r in rows]
    widths = [max(len(str(x[i])) for x in [hdr] + [d[:7] for d in data]) for i in range(7)]
    fmt = "  ".join(f"{{:{'>' if i in (4, 5) else '<'}{w}}}" for i, w in enumerate(widths))
    print(fmt.format(*hdr))
    print("  ".join("-" * w for w in widths))
    for d in data:
        print(fmt.format(*d[:7]) + d[7])
    sys.stdout.flush()


def find_tools(build: Path) -> Tools:
    t = Tools(hucprof=build / "daemon" / "hucprof",
              flood=build / "tests" / "tools" / "huc_udp_flood",
              fold=build / "tests" / "vm" / "hucvm_fold",
              udp_pairs=build / "vm-cache" / "bin" / "udp_pairs",
              netlink_self=build / "vm-cache" / "bin" / "netlink_self",
              pprof=build / "tests" / "tools" / "pprof")
    for p in (t.hucprof, t.flood, t.fold):
        if not p.exists():
            # Registered by this build, so missing means "not built": a failure, not a skip.
            raise VmFailure(f"{p} not built (run ninja in {build} first)")
    for name in ("udp_pairs", "netlink_self"):
        vmlib.compile_c(HERE / "workloads" / f"{name}.c", getattr(t, name))
    return t


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("build_dir", type=Path)
    ap.add_argument("--kernel", action="append", choices=[k.label for k in KERNELS],
                    help="only these kernels (default: those CI boots; see --all)")
    ap.add_argument("--all", action="store_true",
                    help="every kernel, also those CI leaves out (trixie, sid)")
    ap.add_argument("--run", action="append",
                    help="only these runs (fentry, kprobe, hardened_usercopy=off, "
                         "memory-2cpus, memory-64cpus, memory-128cpus)")
    ap.add_argument("--verbose", "-v", action="store_true", help="echo guest consoles live")
    ap.add_argument("--timeout", type=float, default=300, help="hard timeout per VM boot, s")
    args = ap.parse_args()

    t_start = time.monotonic()
    build = args.build_dir.resolve()
    cache = build / "vm-cache"
    runs_dir = build / "vm-runs"
    cache.mkdir(parents=True, exist_ok=True)
    runs_dir.mkdir(parents=True, exist_ok=True)

    all_rows: list[Row] = []
    timings = []
    failures = []
    try:
        qemu_run.preflight()
        tools = find_tools(build)
        apt_state: dict = {}
        specs = [k for k in KERNELS
                 if (k.label in args.kernel if args.kernel else args.all or k.ci)]
        left_out = [k.label for k in KERNELS if k not in specs]
        if left_out and not args.kernel:
            log(f"not booted in this run (CI's set; --all boots them): {', '.join(left_out)}")
        for spec in specs:
            k = kernel_packages.resolve_kernel(spec.label, spec.meta_package, cache, apt_state,
                                     suite=spec.suite)
            for opt in ("CONFIG_HARDENED_USERCOPY", "CONFIG_KPROBE_EVENTS", "CONFIG_HIST_TRIGGERS"):
                if k.config_value(opt) != "y":
                    raise VmFailure(f"{k.package}: {opt} is not y; this tier needs it")
            initrd = cache / f"initramfs-{k.release}.cpio"
            modules = initramfs.build_initramfs(k, initrd)
            log(f"{spec.label}: initramfs modules in load order: {' '.join(modules) or '(none)'}")
            runs = [r for r in runs_for(spec, tools) if not args.run or r.name in args.run]
            for run in runs:
                res_dir = runs_dir / f"{spec.label}-{run.name.replace('=', '-')}"
                try:
                    res = qemu_run.run_vm(k, initrd, HERE / "guest" / "hucprof_guest.py", res_dir,
                                       extra_cmdline=run.extra_cmdline,
                                       env={"HUCVM_PLAN": plan_json(run, tools)},
                                       timeout_s=args.timeout, echo_console=args.verbose,
                                       qemu_args=run.qemu_args)
                except VmFailure as e:
                    # One broken boot fails the tier but does not hide the other runs' tables.
                    failures.append(f"{spec.label}/{run.name}: {e}")
                    print(f"FAIL: {spec.label}/{run.name}: {e}", file=sys.stderr)
                    continue
                timings.append((spec.label, run.name, res.wall_s, res.boot_to_test_s, res.test_s))
                # The guest console once per failed run, whatever failed first.
                console_shown = res.guest_rc != 0
                if console_shown:
                    failures.append(f"{spec.label}/{run.name}: guest script exit {res.guest_rc}")
                    print(qemu_run.format_console(res), file=sys.stderr)
                ctx = RunContext(spec, run, res, tools)
                try:
                    rows = run.check(ctx)
                except (histref.HistParseError, OSError, ValueError) as e:
                    failures.append(f"{spec.label}/{run.name}: cannot evaluate results: {e}")
                    if not console_shown:
                        print(qemu_run.format_console(res), file=sys.stderr)
                    continue
                print(f"\n== kernel {spec.label} ({k.release}), run {run.name}, "
                      f"results in {res.results_dir}")
                print_table(rows)
                missing = (ctx.text("ref-missing.txt") or "").split("\n")
                stackkey = (ctx.text("ref-stackkey.txt") or "n/a").strip()
                print(f"   reference stack key: {stackkey}; real symbols: "
                      + ", ".join(ln.split()[1] for ln in
                                  (ctx.text("kallsyms-usercopy.txt") or "").splitlines())
                      + (f"; not probed by the reference (absent): "
                         f"{', '.join(x for x in missing if x)}" if any(missing) else ""))
                if any(not r.ok for r in rows) and not console_shown:
                    print(qemu_run.format_console(res, 60), file=sys.stderr)
                all_rows += rows
            growth = memory_growth_rows(spec.label, runs)
            if growth:
                print(f"\n== kernel {spec.label}, BPF map memory against possible CPUs")
                print_table(growth)
                all_rows += growth
    except Skip as e:
        print(f"SKIP: {e}")
        return vmlib.SKIP
    except VmFailure as e:
        print(f"FAIL: {e}")
        return 1

    bad = [r for r in all_rows if not r.ok]
    total = time.monotonic() - t_start
    print("\n== timings")
    for label, run, wall, b2t, tst in timings:
        print(f"   {label:5} {run:22} qemu wall {wall:6.1f}s   boot-to-test {b2t or 0:5.2f}s "
              f"(guest clock)   test {tst or 0:6.2f}s")
    print(f"   tier total {total:.1f}s")
    summary = {"rows": [dataclasses.asdict(r) | {"ok": r.ok} for r in all_rows],
               "timings": timings, "total_s": total, "failures": failures}
    (runs_dir / "summary.json").write_text(json.dumps(summary, indent=1))
    for f in failures:
        print(f"FAIL: {f.splitlines()[0]}")
    for r in bad[:40]:
        # With the row's note: CI's digest of a red run shows only these lines.
        note = f" ({r.note})" if r.note else ""
        print(f"FAIL: {r.kernel} {r.run} {r.workload}: {r.what}: expected {r.expected}, "
              f"got {r.got}{note}")
    if len(bad) > 40:
        print(f"FAIL: ... and {len(bad) - 40} more failed checks (tables above)")
    if failures or bad or not all_rows:
        return 1
    print(f"PASS: {len(all_rows)} checks ({sum(r.expected is not None for r in all_rows)} asserted)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
