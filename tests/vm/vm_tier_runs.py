"""What each boot of the VM tier runs (sessions of hucprof with their flags, the workloads) and
which checks judge it."""

from __future__ import annotations

import dataclasses
import json
import re

import hucprof_testlib as tl
from tier_kernels import KernelSpec
from vm_tier_checks import (
    attach_rows, build_row, checks_off_entered, daemon_maps, exactness_rows, fentry_refused_rows,
    flood_rows, missed_rows, profile_rows, rise_row, session_rows, subcheck_method_row,
    udp_ref_rows, udp_rows, workload_rows
)
from vm_tier_follow import follow_rows
from vm_tier_model import (
    FLOOD_PAYLOAD, FLOOD_SECONDS, FLOOD_SENDERS, FOLLOW_SECONDS, FOLLOW_SENDERS, HOUSE_CPU,
    INTERVAL, KALLSYMS_RECORDED, LATENCY_TARGET, MEMLOCK_LIMIT, NL_BIG_M, NL_BIG_SIZE, NL_M,
    NL_SIZE, NOISE_SECONDS, Row, RR_CPU, RR_N, RR_PAIRS, RR_SIZE, RunContext, RunSpec, SAMPLE_HZ,
    Session, Tools, UDP_N, UDP_PAYLOAD, Workload
)


def workloads(spec: KernelSpec, tools: Tools) -> list[Workload]:
    w = [Workload("udp", [str(tools.udp_pairs), str(UDP_N), str(UDP_PAYLOAD)], reference=True),
         Workload("netlink64k", [str(tools.netlink_self), str(NL_M), str(NL_SIZE)],
                  reference=True)]
    if not spec.netlink_64k_vmalloc:
        w.append(Workload("netlinkbig", [str(tools.netlink_self), str(NL_BIG_M),
                                         str(NL_BIG_SIZE)], reference=True))
    return w


def follow(tools: Tools, mode: str) -> dict:
    """`record --mode probe -- FLOOD` beside another flood (guest/follow_record.py)."""
    def flood_argv(seconds, senders):
        return [str(tools.flood), "--seconds", str(seconds), "--payload", str(FLOOD_PAYLOAD),
                "--senders", str(senders)]
    return {"args": ["--mode", "probe", "--probe.attach", mode, "--interval", INTERVAL]
            + NO_DEBUGINFO, "command": flood_argv(FOLLOW_SECONDS, FOLLOW_SENDERS),
            "noise": flood_argv(NOISE_SECONDS, 1)}


def flood(tools: Tools) -> Workload:
    return Workload("flood", [str(tools.flood), "--seconds", str(FLOOD_SECONDS), "--payload",
                              str(FLOOD_PAYLOAD), "--senders", str(FLOOD_SENDERS)])


# Exactness per call site needs every call site named: with the default --top-k 20 a call site
# that is new while 20 others are already ranked (the guest has more: the daemon's own bpf(), 9p,
# tracefs writes, ...) is counted under callsite="other" until its cumulative count overtakes the
# 20th, and a counter never takes back what "other" got (e.g. the first 2 of 100 netlink_sendmsg
# checks on 6.12). 1000 is the largest --top-k; the rows below assert "other" stays still.
#
# --debuginfo.path none: the guest sees the host's root (9p), so on a host with Debian's -dbg
# package of the guest's kernel installed (/usr/lib/debug/boot/vmlinux-RELEASE, as the README
# advises users) hucprof would find it and profiles would hold inline frames and source lines
# that a clean host's do not. Every doctor and run of the tier says what it gets
# (test_hermetic.py checks every plan); tests/vm/debuginfo/ gives its own.
NO_DEBUGINFO = ["--debuginfo.path", "none"]
DAEMON_ARGS = ["--interval", INTERVAL, "--top-k", "1000"] + NO_DEBUGINFO


# The kprobe boot's probe session keys checks by workload too (--probe.workloads), its UDP
# workload alone in this cgroup: every other row of the session holds with the extra key.
WORKLOAD_CGROUP = "hucvm-udp"
# The busy session's load (tcp_rr) is born in this one.
BUSY_CGROUP = "hucvm-busy"


def busy_session(tools: Tools, mode: str) -> Session:
    """tcp_rr's request/response pairs, all on one vCPU, with the daemon on the other: checks
    the kernel skips the check's program for, counted (missed_rows)."""
    load = Workload("rr", [str(tools.in_cgroup), f"/sys/fs/cgroup/{BUSY_CGROUP}",
                           str(tools.tcp_rr), str(RR_PAIRS), str(RR_N), str(RR_SIZE)],
                    reference=True, cgroup=BUSY_CGROUP, cpus=[RR_CPU])
    return Session("busy", ["--mode", "probe", "--probe.attach", mode, "--probe.workloads"]
                   + DAEMON_ARGS, [load], cpus=[HOUSE_CPU], progs=True)


def probe_run(spec: KernelSpec, tools: Tools, mode: str) -> RunSpec:
    base = DAEMON_ARGS
    by_workload = mode == "kprobe"
    probe_workloads = workloads(spec, tools) + ([flood(tools)] if by_workload else [])
    # bpftrace's slab reference (kfunc __check_heap_object with its struct slab argument, 5.17+)
    # once per kernel that classifies, in the fentry boot: a bpftrace start costs tens of seconds
    # under TCG.
    # The same boot's probe session counts slab checks by cache (--probe.objects).
    slab_ref = spec.classifies and mode == "fentry"
    probe_workloads[0].slab_ref = slab_ref
    if by_workload:
        udp = probe_workloads[0]
        udp.cgroup = WORKLOAD_CGROUP
        udp.argv = [str(tools.in_cgroup), f"/sys/fs/cgroup/{WORKLOAD_CGROUP}", *udp.argv]
    probe = Session("probe", ["--mode", "probe", "--probe.attach", mode] + base
                    + (["--probe.workloads"] if by_workload else [])
                    + (["--probe.objects"] if slab_ref else []), probe_workloads,
                    doctor=["--mode", "probe", "--probe.attach", mode] + NO_DEBUGINFO,
                    profile=True)
    busy = busy_session(tools, mode)
    sessions = [probe, busy]
    if mode == "fentry":
        sessions.append(latency_session(tools, mode))
    else:
        sessions.append(Session("sample", ["--mode", "sample", "--sample-frequency",
                                           str(SAMPLE_HZ)] + base, [flood(tools)],
                                doctor=["--mode", "sample"] + NO_DEBUGINFO))

    def check(c: RunContext) -> list[Row]:
        rows = session_rows(c, probe) + attach_rows(c, probe, mode) + exactness_rows(c, probe)
        rows.append(subcheck_method_row(c, probe, "classified" if spec.classifies else "probed"))
        rows.append(build_row(c, probe, "probe mode loads", spec.probe_build))
        rows += profile_rows(c, probe)
        if by_workload:
            rows += workload_rows(c, "probe-udp", WORKLOAD_CGROUP)
        rows += missed_rows(c, "busy-rr", BUSY_CGROUP, mode)
        for s in sessions[1:]:
            rows += session_rows(c, s)
        if mode == "fentry":
            rows += latency_rows(c, sessions[2], mode) + follow_rows(c)
        else:
            rows += flood_rows(c, "probe-flood", "sample-flood")
            rows.append(build_row(c, sessions[-1], "sampler:", spec.sampler_build))
        return rows
    run = RunSpec(mode, "", sessions, check)
    if mode == "fentry":
        run.follow = follow(tools, mode)
    return run


# --latency once per kernel, fexit on top of fentry in the fentry boot (the trampoline then also
# calls the original and keeps a return-value slot: the caller read must still be right).
# --probe.subchecks attach here: the probe session covers the default (classify), this one a
# probe at each sub-check's entry (udp_rows: slab counted N times).
def latency_session(tools: Tools, mode: str) -> Session:
    latency = ["--mode", "probe", "--probe.attach", mode, "--latency", "--probe.subchecks",
               "attach"]
    return Session("latency", latency + DAEMON_ARGS,
                   [Workload("udp", [str(tools.udp_pairs), str(UDP_N), str(UDP_PAYLOAD)])],
                   doctor=latency + NO_DEBUGINFO)


def latency_rows(c: RunContext, latency: Session, mode: str) -> list[Row]:
    tag = "latency-udp"
    rows = attach_rows(c, latency, mode, [LATENCY_TARGET])
    rows.append(subcheck_method_row(c, latency, "probed"))
    rows.append(c.row(tag, "usercopy_check_duration_seconds_count{udp_recvmsg}", UDP_N,
                      c.delta(tag, "usercopy_check_duration_seconds_count",
                              callsite="udp_recvmsg")))
    return rows + udp_rows(c, tag)


def fentry_refused_run(spec: KernelSpec, tools: Tools) -> RunSpec:
    """Kernels whose fentry programs cannot load (5.10): the fentry boot asks doctor for fentry,
    which must exit 1 naming the missing helpers and since when, not an errno. (--latency on
    kprobes is not checked: on 5.10 most of its checks were counted at the call site
    kretprobe_trampoline; docs/kernels.md.)"""
    run = RunSpec("fentry", "", [], lambda c: fentry_refused_rows(c, "fentry-refused"))
    run.doctors = {"fentry-refused": ["--mode", "probe", "--probe.attach", "fentry"]
                   + NO_DEBUGINFO}
    return run


def hardened_off_run(spec: KernelSpec, tools: Tools) -> RunSpec:
    off = Session("off", ["--mode", "probe"] + DAEMON_ARGS,
                  [Workload("udp", [str(tools.udp_pairs), str(UDP_N), str(UDP_PAYLOAD)],
                            reference=True)],
                  doctor=["--mode", "probe"] + NO_DEBUGINFO)

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


def runs_for(spec: KernelSpec, tools: Tools) -> list[RunSpec]:
    fentry = probe_run(spec, tools, "fentry") if spec.fentry else fentry_refused_run(spec, tools)
    return ([fentry]
            + [probe_run(spec, tools, "kprobe"), hardened_off_run(spec, tools)]
            + [memory_run(spec, tools, n) for n in spec.memory_cpus])


def plan_json(run: RunSpec, tools: Tools) -> str:
    return json.dumps({"hucprof": str(tools.hucprof), "kallsyms": KALLSYMS_RECORDED,
                       "sessions": [dataclasses.asdict(s) for s in run.sessions],
                       "doctors": run.doctors, "follow": run.follow})


