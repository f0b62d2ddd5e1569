#!/usr/bin/env python3
"""Guest script of the VM tier: hucprof and the kernel's own reference watch the same workloads.

Reads a plan (JSON in $HUCVM_PLAN, written by vm_tier.py) and, for each session in it, runs
`hucprof doctor` (optional), starts `hucprof run`, and for each workload: arms the reference (if
asked), scrapes hucprof after a drain, runs the workload, stops the reference, scrapes again after
a drain. Then SIGTERMs the daemon. Nothing is judged here: every output goes to $HUCVM_RESULTS
and vm_tier.py evaluates it on the host. Exit 0 unless the harness itself broke (reference
refused, plan unreadable); a daemon that fails is recorded, and the workloads and the reference
still run so the tables show what the kernel counted.

Files, for session S and workload T (all in $HUCVM_RESULTS):
  kallsyms-usercopy.txt ref-stackkey.txt ref-missing.txt cmdline.txt uname.txt
  S-doctor.txt S-doctor.rc S-daemon.log S-daemon.rc S-error.txt S-ready.txt
  S-T-before.txt S-T-after.txt S-T-workload.log S-T-workload.rc
  S-maps.json S-map-ids.txt S-maps-metrics.txt possible-cpus.txt (sessions with "maps": bpftool's
  view of every BPF map, the ids of those the daemon holds, a scrape right after)
  S-profile.pb.gz S-profile-metrics.txt (sessions with "profile": the cumulative pprof profile
  and a scrape from the same drain)
  S-T-{progs,rescued}-{quiet-before,before,after}.json (sessions with "progs": `bpftool -j prog
  show` and the rescue program's `rescued` array around the workload: run_counted_workload)
  hist-<probe>-S-T.txt kprobe_profile-S-T.txt (reference, when the workload asks for it)
  S-T-slabref.txt (bpftrace's slab checks by cache, direction and task, when the workload asks)
  guest-steps.json (guest uptime per step)
  follow*.txt, follow.pb.gz, hist-ufollow-follow.txt (plans with "follow", after the sessions:
  guest/follow_record.py)
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import time
import traceback
from pathlib import Path

sys.dont_write_bytecode = True
sys.path.insert(0, str(Path(__file__).resolve().parent))
import follow_record  # noqa: E402
import guestlib  # noqa: E402


# Long enough for 4 drains of the tier's 500 ms interval.
QUIET_S = 2.5


def run_counted_workload(run, alive: bool, ref, w: dict, tag: str, results: Path,
                         step) -> int:
    """A workload whose every check the kernel ran is to be accounted for against bpftool's
    counters. A reading right before and right after the workload brackets it alone. Each scrape
    follows a quiet spell (nothing but the daemon's drains, which alone on their vCPU skip
    nothing) and is bracketed by the readings on either side of it: what the scrape reports was
    read by a drain between them. Its own request is the one thing beside the drains then (the
    daemon's handler thread enters checks on the daemon's vCPU; a skip of its first check is
    never rescued), so the readings around each scrape bound what it can report
    (vm_tier_checks.missed_rows).
      S-T-progs-quiet-before/-rescued-quiet-before: before the quiet spell and the first scrape
      S-T-progs-before/-rescued-before: after that scrape, right before the workload
      S-T-progs-after/-rescued-after: right after it, before the quiet spell and the second scrape
      S-T-progs-after-scrape/-rescued-after-scrape: right after the second scrape"""
    if w.get("reference"):
        ref.call("ref_start")
    slab_ref = start_slab_ref(w, tag, results, step)
    record_progs(results, tag, "quiet-before")
    time.sleep(QUIET_S)
    if alive:
        (results / f"{tag}-before.txt").write_text(run.daemon.scrape())
    record_progs(results, tag, "before")
    step(f"{tag}: run {' '.join(w['argv'])}")
    rc = guestlib.run_workload(w["argv"], results / f"{tag}-workload.log", cpus=w.get("cpus"))
    (results / f"{tag}-workload.rc").write_text(f"{rc}\n")
    record_progs(results, tag, "after")
    if slab_ref:
        slab_ref.stop()
    step(f"{tag}: workload exit {rc}")
    time.sleep(QUIET_S)
    if alive:
        (results / f"{tag}-after.txt").write_text(run.daemon.scrape())
    record_progs(results, tag, "after-scrape")
    if w.get("reference"):
        ref.call("ref_stop", tag)
    return rc


def main() -> int:
    results = Path(os.environ["HUCVM_RESULTS"])
    plan = json.loads(os.environ["HUCVM_PLAN"])
    steps: list[tuple[float, str]] = []

    def step(what: str) -> None:
        steps.append((guestlib.uptime(), what))
        (results / "guest-steps.json").write_text(json.dumps(steps))
        print(f"HUCVM-STEP {steps[-1][0]:.2f} {what}", flush=True)

    (results / "cmdline.txt").write_text(Path("/proc/cmdline").read_text())
    (results / "uname.txt").write_text(os.uname().release + "\n")
    (results / "possible-cpus.txt").write_text(
        Path("/sys/devices/system/cpu/possible").read_text())
    # The plan's symbols (vm_tier_model.KALLSYMS_RECORDED), with any compiler suffix.
    wanted = re.compile(r" [tT] (" + "|".join(map(re.escape, plan["kallsyms"]))
                        + r")(\.[a-z0-9.]+)?$")
    with open("/proc/kallsyms") as f:
        syms = sorted((line.split()[2], line.split()[1]) for line in f
                      if wanted.search(line.rstrip("\n")))
    (results / "kallsyms-usercopy.txt").write_text("".join(f"{t} {n}\n" for n, t in syms))

    for name, flags in (plan.get("doctors") or {}).items():
        run_doctor(plan["hucprof"], name, flags, results)
        step(f"{name}: doctor")

    for cgroup in sorted({w["cgroup"] for s in plan["sessions"] for w in s["workloads"]
                          if w.get("cgroup")}):
        guestlib.make_cgroup(cgroup)
    needs_ref = plan.get("follow") or any(w.get("reference") for s in plan["sessions"]
                                          for w in s["workloads"])
    ref = None
    if needs_ref:
        ref = guestlib.RefProbe(results)
        ref.call("ref_init")
        ref.call("ref_usercopy_probes")
    try:
        for session in plan["sessions"]:
            run_session(plan, session, results, ref, step)
        if plan.get("follow"):
            try:
                follow_record.run(plan, ref, results, step)
            except guestlib.RefError:
                raise
            except Exception:  # recorded; the host fails the follow rows on it
                (results / "follow-error.txt").write_text(traceback.format_exc())
    finally:
        if ref is not None:
            ref.close()
    step("done")
    return 0


def start_slab_ref(w: dict, tag: str, results: Path, step):
    """S-T-slabref.txt: bpftrace's count of slab checks by cache over the workload, for a
    workload that asks for it (the host compares it with usercopy_object_checks_total)."""
    if not w.get("slab_ref"):
        return None
    ref = guestlib.SlabRef(results / f"{tag}-slabref.txt")
    step(f"{tag}: bpftrace attached")
    return ref


def run_doctor(binary: str, name: str, flags: list[str], results: Path) -> None:
    """NAME-doctor.txt, NAME-doctor.rc: `hucprof doctor FLAGS`."""
    with open(results / f"{name}-doctor.txt", "w") as out:
        rc = subprocess.run([binary, "doctor", *flags], stdout=out, stderr=subprocess.STDOUT,
                            timeout=120).returncode
    (results / f"{name}-doctor.rc").write_text(f"{rc}\n")


def run_session(plan: dict, session: dict, results: Path, ref, step) -> None:
    """run_session_here with the session's daemon on its vCPUs (it starts from here, so it keeps
    to them) and this script on the others: the script's scrapes never make a second task entering
    checks on the daemon's vCPU. Then back on every one."""
    every = os.sched_getaffinity(0)
    if session.get("cpus"):
        os.sched_setaffinity(0, session["cpus"])
    try:
        run_session_here(plan, session, results, ref, step, every)
    finally:
        os.sched_setaffinity(0, every)


def record_progs(results: Path, tag: str, when: str) -> None:
    """bpftool's programs (run counts, recursion_misses) and the rescue program's count of
    rescued checks (its per-CPU `rescued` array, absent without it), read one after the other
    with nothing else entering checks on this vCPU meanwhile: each bpftool writes its own file
    while this script blocks in waitpid. Reading its output from a pipe instead, this script
    polls (poll() copies its fd array: a check) beside bpftool on the same vCPU, and a check of
    one can be skipped for a preempted run of the other's; such a skip between the two readings
    lands on one side of a bracket and its rescue on the other (the busy session once counted
    one check too many that way: missed_rows)."""
    for what, argv in (("progs", ["prog", "show"]), ("rescued", ["map", "dump", "name",
                                                                   "rescued"])):
        path = results / f"{tag}-{what}-{when}.json"
        with open(path, "w") as out:
            rc = subprocess.run(["bpftool", "-j", *argv], stdout=out,
                                stderr=subprocess.DEVNULL).returncode
        if rc != 0:
            path.write_text("")


def run_session_here(plan: dict, session: dict, results: Path, ref, step,
                     every: set[int]) -> None:
    name = session["name"]
    binary = plan["hucprof"]
    if session.get("doctor") is not None:
        run_doctor(binary, name, session["doctor"], results)
    step(f"{name}: start hucprof {' '.join(session['args'])}")
    run = guestlib.HucprofRun(binary, session["args"], results / f"{name}-daemon.log")
    if session.get("cpus") and every - set(session["cpus"]):
        os.sched_setaffinity(0, every - set(session["cpus"]))
    alive = True
    try:
        run.wait_ready()
        (results / f"{name}-ready.txt").write_text(run.daemon.scrape())
        step(f"{name}: ready")
    except Exception as e:  # recorded; the host fails the run on it
        alive = False
        (results / f"{name}-error.txt").write_text(f"start-up: {e}\n")
    for w in session["workloads"]:
        tag = f"{name}-{w['tag']}"
        try:
            if session.get("progs"):
                rc = run_counted_workload(run, alive, ref, w, tag, results, step)
            else:
                if w.get("reference"):
                    ref.call("ref_start")
                slab_ref = start_slab_ref(w, tag, results, step)
                if alive:
                    run.scrape_after_drain(results / f"{tag}-before.txt")
                step(f"{tag}: run {' '.join(w['argv'])}")
                rc = guestlib.run_workload(w["argv"], results / f"{tag}-workload.log",
                                           cpus=w.get("cpus"))
                (results / f"{tag}-workload.rc").write_text(f"{rc}\n")
                if slab_ref:
                    slab_ref.stop()
                if w.get("reference"):
                    ref.call("ref_stop", tag)
                step(f"{tag}: workload exit {rc}")
                if alive:
                    run.scrape_after_drain(results / f"{tag}-after.txt")
        except guestlib.RefError:
            raise
        except Exception:
            alive = False
            with open(results / f"{name}-error.txt", "a") as f:
                f.write(f"workload {w['tag']}:\n{traceback.format_exc()}\n")
    # What a session asks for before the daemon stops; a failure is the session's error, and the
    # next one still runs.
    for flag, what, record in (("maps", "recording BPF maps", record_maps),
                               ("profile", "profile", save_profile)):
        if not (alive and session.get(flag)):
            continue
        try:
            record(run, results, name)
        except Exception:
            with open(results / f"{name}-error.txt", "a") as f:
                f.write(f"{what}:\n{traceback.format_exc()}\n")
    rc = run.stop()
    (results / f"{name}-daemon.rc").write_text(f"{rc}\n")
    step(f"{name}: hucprof exit {rc}")


def record_maps(run, results: Path, name: str) -> None:
    """bpftool's list of every BPF map (the reference: its memlock), the ids of the maps the
    daemon holds open (from its fdinfo, so nothing of another process counts), and a scrape
    after a drain (hucprof_bpf_map_memory_bytes)."""
    run.scrape_after_drain(results / f"{name}-maps-metrics.txt")
    pid = run.daemon.proc.pid
    ids = guestlib.tl.held_bpf_ids(pid, "map")
    (results / f"{name}-map-ids.txt").write_text("".join(f"{i}\n" for i in sorted(ids)))
    bpftool = shutil.which("bpftool") or "/usr/sbin/bpftool"
    out = subprocess.run([bpftool, "-j", "map", "show"], capture_output=True, text=True,
                         timeout=60)
    (results / f"{name}-maps.json").write_text(out.stdout)


def save_profile(run, results: Path, name: str) -> None:
    """S-profile.pb.gz (/debug/pprof/usercopy, cumulative) and S-profile-metrics.txt from the
    same drain: both are taken again until no drain came between them, so the host can compare
    the profile's calls with the counters exactly. Tried for up to 3 minutes, not a number of
    times: on a loaded host one try can outlast the tier's 500 ms interval many times in a row."""
    import urllib.request
    deadline = time.monotonic() + 180
    while time.monotonic() < deadline:
        before = run.drains()
        with urllib.request.urlopen(run.daemon.url("/debug/pprof/usercopy"), timeout=60) as r:
            profile = r.read()
        text, samples = run.metrics()
        if guestlib.tl.total(samples, "hucprof_drains_total") == before:
            (results / f"{name}-profile.pb.gz").write_bytes(profile)
            (results / f"{name}-profile-metrics.txt").write_text(text)
            return
    raise RuntimeError("a drain came between the profile and the scrape in every try for 3 minutes")


if __name__ == "__main__":
    sys.exit(main())
