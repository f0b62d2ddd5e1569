"""What each boot of the VM tier must show, as rows (expected against got): doctor and run
agree, the probes attached, every count, byte and sub-check equal to the kernel's own reference,
the flood's top call sites, the profile against /metrics, and the BPF maps' memory."""

from __future__ import annotations

import json
import re
import subprocess
from pathlib import Path

import hucprof_testlib as tl
import pprof_raw
from vm_tier_model import (
    FLOOD_PAYLOAD, log_error_lines, MEMLOCK_PER_CPU_LIMIT, MIN_FLOOD_SAMPLES, NETLINK_SITES, NL_BIG_M,
    NL_BIG_SIZE, NL_M, NL_SIZE, PROBES, Row, RR_N, RR_PAIRS, RunContext, RunSpec, Session,
    parse_folded, SUBCHECK_PROBES, TARGETS, UDP_N, UDP_PAYLOAD, UDP_SITES
)


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
        # A function the kernel does not have ran 0 times (find_vmap_area on 5.10).
        absent = ref_sub is None and c.ref_absent(probe)
        for callsite in callsites:
            want = (0 if absent else "ref") if ref_sub is None else \
                ref_sub.get((callsite, "-"), [0, 0])[0]
            got = c.delta(tag, "usercopy_subchecks_total", callsite=callsite, step=kind)
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
                             step="slab_object"))
    return rows + caller_rows(c, tag) + helper_walk_rows(c, tag, n)


PID_HIST_LINE = re.compile(r"\{\s*common_pid:\s*(\d+)\s*\}\s*hitcount:\s*(\d+)\s+n:\s*(\d+)")
IN_CGROUP_PID = re.compile(r"^in_cgroup: pid (\d+)$", re.M)


def workload_rows(c: RunContext, tag: str, cgroup: str) -> list[Row]:
    """--probe.workloads: what hucprof counted for the workload's cgroup equals the kernel's own
    count of __check_object_size calls by the workload's task, which was born in that cgroup and
    is its only task (refprobe.sh's upid hist, keyed by thread), and the workloads' checks add up
    to every check."""
    born = IN_CGROUP_PID.search(c.text(f"{tag}-workload.log") or "")
    pid = int(born.group(1)) if born else None
    text = c.text(f"hist-upid-{tag}.txt")
    ref = None
    if pid is not None and text is not None:
        ref = [0, 0]
        for m in PID_HIST_LINE.finditer(text):
            if int(m.group(1)) == pid:
                ref = [int(m.group(2)), int(m.group(3))]
    name = "/" + cgroup
    note = f"pid {pid}" if ref is not None else "no pid or no upid reference"
    return [
        c.row(tag, "kernel ref (hist by pid): the workload's checks >= its UDP pairs", 1,
              None if ref is None else int(ref[0] >= UDP_N), note),
        rise_row(c, tag, "usercopy_workload_checks_total", None if ref is None else ref[0], note,
                 workload=name, workload_kind="cgroup"),
        rise_row(c, tag, "usercopy_workload_check_bytes_total", None if ref is None else ref[1],
                 note, workload=name, workload_kind="cgroup"),
        c.row(tag, "sum of usercopy_workload_checks_total rise == usercopy_checks_total rise",
              c.delta(tag, "usercopy_checks_total"), c.delta(tag, "usercopy_workload_checks_total")),
    ]


RR_CHILD_PID = re.compile(r"^tcp_rr: pid (\d+)$", re.M)


def check_program_misses(c: RunContext, name: str) -> int | None:
    """recursion_misses of hucprof's check programs in a `bpftool -j prog show` (bpftool leaves
    out a zero count)."""
    text = c.text(name)
    if not text:
        return None
    return sum(p.get("recursion_misses", 0) for p in json.loads(text)
               if re.fullmatch(r"huc_(fentry|kprobe)_check_\w+", p.get("name", "")))


def percpu_sum(c: RunContext, name: str) -> int | None:
    """The sum over CPUs of a per-CPU array's one u64 in a `bpftool -j map dump` (values as
    numbers with the map's BTF, as little-endian bytes without); None without a dump."""
    text = c.text(name)
    if not text:
        return None
    total = 0
    for entry in json.loads(text):
        for v in entry.get("formatted", entry).get("values", []):
            value = v.get("value")
            total += (value if isinstance(value, int)
                      else int.from_bytes(bytes(int(b, 16) for b in value), "little"))
    return total


def missed_rows(c: RunContext, tag: str, cgroup: str, mode: str) -> list[Row]:
    """The busy load (tcp_rr, born in `cgroup`, on one vCPU; the daemon on the other, the guest
    script on the first): what hucprof counted for the workload's cgroup plus the checks the
    kernel skipped the check's program for and the rescue program did not count equals the
    kernel's own count of the workload's checks (refprobe.sh's upid hist, summed over its
    processes), with the skipped and rescued checks bpftool reads right before and right after
    the workload (the check program's recursion_misses, the rescue program's `rescued` array):
    every skip in that window is the workload's, nothing else entering checks on its vCPU and the
    daemon's vCPU having one task doing so. And hucprof's own skipped and rescued checks rose
    between its scrapes by what bpftool read between them: a scrape reports what a drain read
    between the bpftool readings on either side of it (hucprof_guest.run_counted_workload), which
    are equal unless something was skipped or rescued during the scrape itself; then the rise
    must lie within what the readings allow."""
    log = c.text(f"{tag}-workload.log") or ""
    pids = {int(p) for p in IN_CGROUP_PID.findall(log) + RR_CHILD_PID.findall(log)}
    text = c.text(f"hist-upid-{tag}.txt")
    ref = None
    if pids and text is not None:
        ref = sum(int(m.group(2)) for m in PID_HIST_LINE.finditer(text)
                  if int(m.group(1)) in pids)
    counted = c.delta(tag, "usercopy_workload_checks_total", workload="/" + cgroup,
                      workload_kind="cgroup")
    after = c.metrics(f"{tag}-after.txt")
    coverage = None
    if after is not None:
        info = tl.select(after, "hucprof_missed_runs_info", what="checks")
        coverage = info[0][0].get("counted") if info else None
    readings = {w: (check_program_misses(c, f"{tag}-progs-{w}.json"),
                    percpu_sum(c, f"{tag}-rescued-{w}.json"))
                for w in ("quiet-before", "before", "after", "after-scrape")}

    def counts_between(first: str, last: str) -> tuple[int | None, int | None]:
        (s0, r0), (s1, r1) = readings[first], readings[last]
        return (None if None in (s0, s1) else s1 - s0,
                None if None in (r0, r1) else r1 - r0)

    skipped, rescued = counts_between("before", "after")
    # The kernel counts a kprobe program's skipped runs from 6.7 (trace_call_bpf); a trampoline's
    # wherever bpf_prog_info has recursion_misses (5.12).
    counts = mode == "fentry" or c.res.kernel.version() >= (6, 7)
    missed = None if skipped is None else skipped - (rescued or 0)
    total = None if counted is None or missed is None else counted + (missed if counts else 0)
    rate = ("" if not ref or missed is None
            else f"{missed} of {ref} not counted: {missed * 100000 / ref:.0f} per 100,000; "
                 f"{skipped} skipped, {rescued or 0} rescued")
    calls = RR_PAIRS * 2 * 2 * RR_N
    rows = [
        c.row(tag, f"kernel ref (hist by pid): the workload's checks >= its {calls} send/recv",
              1, None if ref is None else int(ref >= calls), f"{len(pids)} processes"),
        c.row(tag, "hucprof_missed_runs_info{checks} counted", "yes" if counts else "no",
              coverage),
        c.row(tag, "usercopy_workload_checks_total rise + (bpftool: skipped - rescued) == kernel "
              "ref", ref, total, rate),
    ]
    # A scrape reports what one drain read: the skips at t1, then the rescues at t2 >= t1, both
    # between the bpftool readings on either side of the scrape. Its missed plus rescued checks
    # are the skips at t1, its rescued checks the rescues at t2: each rise between the scrapes
    # lies within what the readings around them allow, exactly their difference when nothing
    # moved while a scrape was taken.
    first, second = ("quiet-before", "before"), ("after", "after-scrape")
    skips = {w: readings[w][0] for w in first + second}
    rescues = {w: readings[w][1] for w in first + second}
    missed_rise = c.delta(tag, "usercopy_checks_missed_total")
    rescued_rise = c.delta(tag, "hucprof_probe_rescued_checks_total")
    with_rescue = None not in rescues.values()
    seen_rise = (None if missed_rise is None or (with_rescue and rescued_rise is None)
                 else missed_rise + (rescued_rise if with_rescue else 0))
    skips_what = ("usercopy_checks_missed_total + hucprof_probe_rescued_checks_total rise == "
                  "bpftool: skipped, between the scrapes")
    if not counts:
        rows.append(c.row(tag, skips_what, None, seen_rise))
    elif None in skips.values():
        rows.append(c.row(tag, skips_what, "bpftool's readings around both scrapes", None,
                          "missing: " + ", ".join(w for w, v in skips.items() if v is None)))
    else:
        rows.append(bounded_row(c, tag, skips_what, skips["after"] - skips["before"],
                                skips["after-scrape"] - skips["quiet-before"], seen_rise))
    if with_rescue:
        rows.append(bounded_row(
            c, tag, "hucprof_probe_rescued_checks_total rise == the rescue program's `rescued` "
            "(bpftool), between the scrapes", rescues["after"] - rescues["before"],
            rescues["after-scrape"] - rescues["quiet-before"], rescued_rise))
    return rows


def bounded_row(c: RunContext, tag: str, what: str, lo: int, hi: int, got) -> Row:
    """A row that holds exactly when nothing moved while the scrapes were taken (lo == hi), and
    within [lo, hi] when something did: the note says which."""
    if lo == hi:
        return c.row(tag, what, lo, got)
    span = f"{lo}..{hi}"
    within = isinstance(got, int) and lo <= got <= hi
    return c.row(tag, what, span, span if within else got,
                 f"{got}: bpftool's readings around the scrapes moved while they were taken")


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
    note = ("vmalloc'ed skb head" if vmalloc
            else "kvmalloc: head from the page allocator" if c.spec.vmalloc_subcheck
            else "no vmalloc check in this kernel (check_heap_object returns for it)")
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
                 step="vmap_area"),
        rise_row(c, tag, "usercopy_subchecks_total", exp_v, note, callsite="netlink_recvmsg",
                 step="vmap_area"),
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
    hold on every kernel is that the two call sites copying the 64-byte payloads (probe mode's top
    two by checks among those whose checks average the payload's size) take most of the check's
    samples, far ahead of the 16-byte address copies beside them; a half leaves room for many sigma of sampling noise (tests/vm/README.md)."""
    ptop, pcounts = top_callsite(c, probe_tag, "usercopy_checks_total",
                                 "usercopy_check_bytes_total")
    _, pbytes = top_callsite(c, probe_tag, "usercopy_check_bytes_total")
    stop, scounts = top_callsite(c, sample_tag, "usercopy_cpu_samples_total")
    fmt = lambda d: ", ".join(f"{k}={v:g}" for k, v in sorted(d.items(), key=lambda kv: -kv[1])[:4])  # noqa: E731,E501
    in_checks = round(sum(v for v in scounts.values())) if scounts else None
    # The payload copies are the call sites whose checks average the flood's payload size: by
    # bytes alone, a busy guest's path lookups (getname_flags) outranked udp_recvmsg on 6.1.
    payload_sites = sorted((cs for cs, n in pcounts.items()
                            if n > 0 and abs(pbytes.get(cs, 0) / n - FLOOD_PAYLOAD) < 0.5),
                           key=lambda cs: -pcounts[cs])[:2]
    in_payload = sum(scounts.get(cs, 0) for cs in payload_sites)
    return [
        c.row(probe_tag, "probe mode: top call site by usercopy_checks_total", None, ptop,
              fmt(pcounts)),
        c.row(probe_tag, f"probe mode: the two call sites copying {FLOOD_PAYLOAD} bytes a check",
              None, " ".join(sorted(payload_sites)) or None, fmt(pbytes)),
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


def pprof_raw_calls(pprof: Path, profile: Path) -> dict[str, int]:
    """Calls per callsite label of a profile, as Google's pprof reads it (`pprof -raw`)."""
    try:
        types, samples = pprof_raw.read(str(pprof), str(profile))
    except subprocess.CalledProcessError as e:
        raise ValueError(f"pprof -raw {profile.name}: {e.stderr.strip()}") from None
    calls_column = [t.split("/")[0] for t in types].index("calls")
    calls: dict[str, int] = {}
    for sample in samples:
        callsite = sample.labels.get("callsite")
        if callsite is not None:
            calls[callsite] = calls.get(callsite, 0) + sample.values[calls_column]
    return calls


def pprof_missed_checks(pprof: Path, profile: Path) -> int | None:
    """The checks a profile says the kernel skipped its program for (its `hucprof.missed_checks.*`
    comments, as `pprof -comments` prints them, summed over reasons); None when the profile says
    they were not counted or says nothing of them."""
    r = subprocess.run([str(pprof), "-comments", str(profile)], capture_output=True, text=True)
    if r.returncode != 0:
        raise ValueError(f"pprof -comments {profile.name}: {r.stderr.strip()}")
    counts = [int(m.group(1)) for m in
              re.finditer(r"^hucprof\.missed_checks\.\w+=(\d+)$", r.stdout, re.MULTILINE)]
    return sum(counts) if counts else None


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


SLAB_REF_KEY = re.compile(r"^@\[(?P<cache>[^,\]]+), (?P<to_user>[01]), *$")
SLAB_REF_END = re.compile(r"^\]: (?P<n>\d+)$")
DIRECTIONS = {"0": "from_user", "1": "to_user"}


def parse_slab_ref(text: str) -> list[tuple[str, str, list[str], int]] | None:
    """bpftrace's map from S-T-slabref.txt as (cache, direction, frames above
    __check_object_size leaf first, count); None when bpftrace did not attach or exit 0. Its
    keys span lines: `@[CACHE, TO_USER, ` then one `func+off` frame a line, then `]: COUNT`."""
    if "Attaching" not in text or "hucvm-bpftrace-rc 0" not in text:
        return None
    out = []
    key, frames = None, []
    for line in text.splitlines():
        line = line.strip()
        if (m := SLAB_REF_KEY.match(line)):
            key, frames = m, []
        elif key is not None and (m := SLAB_REF_END.match(line)):
            names = [f.split("+", 1)[0] for f in frames]
            above = names[names.index("__check_object_size") + 1:] \
                if "__check_object_size" in names else []
            out.append((key["cache"], DIRECTIONS[key["to_user"]], above, int(m["n"])))
            key = None
        elif key is not None and line:
            frames.append(line)
    return out


def fold_slab_ref(fold: Path, entries: list[tuple[str, str, list[str], int]]
                  ) -> dict[tuple[str, str, str], int]:
    """(callsite, direction, cache) -> bpftrace's count, its stacks folded by hucvm_fold (the
    daemon's CallsiteFolder), one run per cache."""
    out: dict[tuple[str, str, str], int] = {}
    for cache in sorted({e[0] for e in entries}):
        lines = [f"{n} 0 {direction} {';'.join(frames) or '[unknown]'}"
                 for name, direction, frames, n in entries if name == cache]
        r = subprocess.run([str(fold)], input="\n".join(lines) + "\n", capture_output=True,
                           text=True)
        if r.returncode != 0:
            raise ValueError(f"hucvm_fold failed on bpftrace's stacks: {r.stderr.strip()}")
        for (callsite, _syscall, direction), (count, _bytes) in parse_folded(r.stdout).items():
            out[(callsite, direction, cache)] = out.get((callsite, direction, cache), 0) + count
    return out


def slab_object_rows(c: RunContext, tag: str, sites: list[tuple[str, str]]) -> list[Row]:
    """Per call site of the workload and slab cache, the rise of usercopy_object_checks_total
    == bpftrace's __check_heap_object count (kfunc, keyed by cache and kernel stack, the stacks
    folded by hucprof's own CallsiteFolder), each inside the cache's usercopy region."""
    text = c.text(f"{tag}-slabref.txt")
    entries = parse_slab_ref(text) if text is not None else None
    before, after = c.metrics(f"{tag}-before.txt"), c.metrics(f"{tag}-after.txt")
    if entries is None or before is None or after is None:
        why = "no bpftrace output" if text is None else \
            ("bpftrace did not attach or exit 0: " + " ".join(text.split()[-12:])
             if entries is None else "no scrape")
        return [c.row(tag, "slab checks by call site and cache == bpftrace", "ref", None,
                      why[:200])]
    ref = fold_slab_ref(c.tools.fold, entries)
    (c.res.file(f"slabref-{tag}.tsv")).write_text(
        "# callsite\tdirection\tcache\tcount (bpftrace, folded by hucprof's CallsiteFolder)\n"
        + "".join(f"{k[0]}\t{k[1]}\t{k[2]}\t{v}\n" for k, v in sorted(ref.items())))
    ours: dict[tuple[str, str, str], int] = {}
    not_inside = 0
    for callsite, direction in sites:
        for scrape, sign in ((after, 1), (before, -1)):
            for labels, v in tl.select(scrape, "usercopy_object_checks_total",
                                       callsite=callsite, object_kind="slab"):
                key = (callsite, direction, labels["object"])
                ours[key] = ours.get(key, 0) + sign * round(v)
                if labels.get("region") != "inside":
                    not_inside += sign * round(v)
    wanted = {k for k in ref if (k[0], k[1]) in sites} | {k for k, v in ours.items() if v}
    rows = [c.row(tag, f"usercopy_object_checks_total{{{k[0]},slab,{k[2]}}} += bpftrace ({k[1]})",
                  ref.get(k, 0), ours.get(k, 0)) for k in sorted(wanted)]
    if not wanted:
        rows.append(c.row(tag, "slab checks on the workload's call sites (bpftrace)", ">0", 0,
                          "bpftrace saw none: nothing compared"))
    rows.append(c.row(tag, "slab checks not region=\"inside\" (unknown cache or outside)", 0,
                      not_inside))
    return rows


def exactness_rows(c: RunContext, s: Session) -> list[Row]:
    rows = []
    for w in s.workloads:
        tag = f"{s.name}-{w.tag}"
        if w.tag == "udp":
            rows += udp_ref_rows(c, tag, hardened=True) + udp_rows(c, tag)
            rows += compare_rows(c, tag, UDP_SITES)
            if w.slab_ref:
                rows += slab_object_rows(c, tag, UDP_SITES)
        elif w.tag == "netlink64k":
            rows += netlink_rows(c, tag, NL_M, NL_SIZE,
                                 c.spec.netlink_64k_vmalloc and c.spec.vmalloc_subcheck)
            rows += compare_rows(c, tag, NETLINK_SITES)
        elif w.tag == "netlinkbig":
            rows += netlink_rows(c, tag, NL_BIG_M, NL_BIG_SIZE, True)
            rows += compare_rows(c, tag, NETLINK_SITES)
    return rows


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


BUILD_LINE = {"probe mode loads": re.compile(r"probe mode loads (\w+)"),
              "sampler:": re.compile(r" sampler: (\w+) ")}


def build_row(c: RunContext, s: Session, prefix: str, expected: str | None) -> Row:
    """Which build of a BPF object the daemon loaded (its log says, with why not the better
    ones), from the kernel's feature probes alone."""
    m = BUILD_LINE[prefix].search(c.text(f"{s.name}-daemon.log") or "")
    line = next((ln for ln in (c.text(f"{s.name}-daemon.log") or "").splitlines()
                 if prefix in ln), "")
    return c.row(s.name, f"BPF object build ({prefix.rstrip(':')})", expected,
                 m.group(1) if m else None, line.split(prefix, 1)[-1].strip()[:200])


# What a kernel without hucprof's fentry helpers must hear from doctor: the helpers, their
# program type and the release each came in, not the errno the load would give.
FENTRY_GAP = ("helper bpf_get_func_ip in fentry programs (Linux 5.15)",
              "helper bpf_get_func_arg_cnt in fentry programs (Linux 5.17)")


def fentry_refused_rows(c: RunContext, name: str) -> list[Row]:
    text = c.text(f"{name}-doctor.txt") or ""
    verdict = DOCTOR_VERDICT.search(text)
    return [c.row(name, "doctor --probe.attach fentry: exit status", 1,
                  c.int_file(f"{name}-doctor.rc"), verdict.group(0)[:160] if verdict else "")] + [
        c.row(name, f"doctor names {want.split(' (')[0]}", 1, int(want in text))
        for want in FENTRY_GAP]
