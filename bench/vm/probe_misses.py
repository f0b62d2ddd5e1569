#!/usr/bin/env python3
"""How many checks the kernel runs without hucprof's check program, with the rescue program and
without it, on Debian's own kernels in QEMU (docs/design.md, "Checks the program never saw").

One boot per kernel, 2 vCPUs. Each round starts `hucprof run --mode probe --probe.workloads` with
the rescue program on and then off (HUCPROF_BENCH_RESCUE), the daemon on vCPU 0, and runs the VM
tier's busy load there: tests/vm/workloads/tcp_rr.c's request/response pairs, born in a cgroup,
every process on vCPU 1. Per run it records the kernel's own numbers beside hucprof's:

  checks     the kernel's count of the load's checks (a kprobe event's hist keyed by pid)
  skipped    bpftool's recursion_misses of the check's program over the load
  rescued    hucprof_probe_rescued_checks_total's rise (the rescue program's count)
  missed     usercopy_checks_missed_total's rise: skipped and not rescued
  counted    usercopy_workload_checks_total{the load's cgroup}'s rise
  exact      counted + missed == checks

  bench/vm/probe_misses.py BUILD_DIR [--kernel trixie-backports] [--kernel trixie-backports-rt]
                           [--rounds 3] [--pairs 4] [--n 2000] [--cpus 2] [--cmdline 'preempt=full']
                           [--markdown FILE] [-v]

--kernel takes any label of tests/vm/tier_kernels.py's KERNELS (default: trixie-backports). The
table gives, per kernel and variant, the sum over rounds and the missed checks per 100,000. Not
part of ctest; TCG, so the rates are the emulator's (a run of the check's program takes far longer
there than on hardware, and so does the window in which a preempted one holds the CPU): compare
the variants, not the absolute rates. In the guest the same file runs the measurements.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import subprocess
import sys
import time
from pathlib import Path

from measurement_log import MeasurementLog

sys.dont_write_bytecode = True
HERE = Path(__file__).resolve().parent
REPO = HERE.parents[1]
VARIANTS = {"rescue": "on", "no_rescue": "off"}
CGROUP = "hucvm-misses"
LOAD_CPU, HOUSE_CPU = 1, 0


# ---------------------------------------------------------------------------------------------
# Guest side
# ---------------------------------------------------------------------------------------------

def check_program_skips() -> int:
    r = subprocess.run(["bpftool", "-j", "prog", "show"], capture_output=True, text=True,
                       check=True)
    return sum(p.get("recursion_misses", 0) for p in json.loads(r.stdout)
               if re.fullmatch(r"huc_(fentry|kprobe)_check_\w+", p.get("name", "")))


def guest_main() -> int:
    sys.path.insert(0, str(REPO / "tests" / "vm" / "guest"))
    import guestlib
    tl = guestlib.tl

    results = Path(os.environ["HUCVM_RESULTS"])
    plan = json.loads(os.environ["HUCVM_BENCH_PLAN"])
    os.sched_setaffinity(0, {HOUSE_CPU})
    cgroup = guestlib.make_cgroup(CGROUP)
    ref = guestlib.RefProbe(results)
    log = MeasurementLog(results, "HUCVM-BENCH")
    ref.call("ref_init")
    ref.call("ref_probe_keyed", "common_pid", "upid", "__check_object_size", "n=%si:u64", "n")

    def measure(variant: str, rnd: int) -> dict:
        tag = f"{variant}-{rnd}"
        log = results / f"daemon-{tag}.log"
        os.environ["HUCPROF_BENCH_RESCUE"] = VARIANTS[variant]
        run = guestlib.HucprofRun(plan["hucprof"], ["--mode", "probe", "--probe.workloads",
                                                    "--interval", "500ms", "--top-k", "1000"],
                                  log)
        try:
            run.wait_ready(timeout=3600)
            ref.call("ref_start")
            before = tl.parse_metrics(run.scrape_after_drain(timeout=600))
            skips0 = check_program_skips()
            rc = guestlib.run_workload(
                [plan["in_cgroup"], str(cgroup), plan["tcp_rr"], str(plan["pairs"]),
                 str(plan["n"]), "100"], results / f"load-{tag}.log", timeout=3600,
                cpus=[LOAD_CPU])
            ref.call("ref_stop", tag)
            after = tl.parse_metrics(run.scrape_after_drain(timeout=600))
            skips1 = check_program_skips()
        finally:
            rc_daemon = run.stop()
        text = (results / f"load-{tag}.log").read_text()
        pids = {int(p) for p in re.findall(r"^(?:in_cgroup|tcp_rr): pid (\d+)$", text, re.M)}
        hist = (results / f"hist-upid-{tag}.txt").read_text()
        checks = sum(int(m.group(2)) for m in re.finditer(
            r"\{\s*common_pid:\s*(\d+)\s*\}\s*hitcount:\s*(\d+)", hist) if int(m.group(1)) in pids)

        def rise(name, **labels):
            return round(tl.total(after, name, **labels) - tl.total(before, name, **labels))

        rec = {"variant": variant, "round": rnd, "load_rc": rc, "daemon_rc": rc_daemon,
               "checks": checks, "skipped": skips1 - skips0,
               "rescued": rise("hucprof_probe_rescued_checks_total"),
               "missed": rise("usercopy_checks_missed_total"),
               "counted": rise("usercopy_workload_checks_total", workload="/" + CGROUP,
                               workload_kind="cgroup")}
        rec["exact"] = rec["counted"] + rec["missed"] == checks
        return rec

    try:
        for rnd in range(plan["rounds"]):
            for variant in VARIANTS:
                log.save(measure(variant, rnd))
    finally:
        ref.close()
    return 0


# ---------------------------------------------------------------------------------------------
# Host side
# ---------------------------------------------------------------------------------------------

def report(results: dict) -> list[str]:
    lines = ["| kernel | variant | rounds | checks | skipped | rescued | missed | missed per "
             "100,000 | counted + missed == checks |", "|---|---|---|---|---|---|---|---|---|"]
    for label, (release, records) in results.items():
        for variant in VARIANTS:
            rs = [r for r in records if r["variant"] == variant]
            if not rs:
                continue
            tot = {k: sum(r[k] for r in rs) for k in ("checks", "skipped", "rescued", "missed")}
            rate = 1e5 * tot["missed"] / tot["checks"] if tot["checks"] else 0
            exact = sum(r["exact"] for r in rs)
            lines.append(f"| {release} | {variant} | {len(rs)} | {tot['checks']:,} | "
                         f"{tot['skipped']:,} | {tot['rescued']:,} | {tot['missed']:,} | "
                         f"{rate:.0f} | {exact} of {len(rs)} |")
    return lines


def host_main() -> int:
    sys.path.insert(0, str(REPO / "tests" / "vm"))
    import qemu_run
    import tier_kernels
    import vmlib

    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("build_dir", type=Path)
    ap.add_argument("--kernel", action="append", choices=[k.label for k in tier_kernels.KERNELS])
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--pairs", type=int, default=4)
    ap.add_argument("--n", type=int, default=2000, help="requests per pair")
    ap.add_argument("--cpus", type=int, default=2)
    ap.add_argument("--cmdline", default="", help="more kernel parameters, e.g. preempt=full")
    ap.add_argument("--markdown", type=Path, help="also write the table here")
    ap.add_argument("--verbose", "-v", action="store_true", help="echo the guest console")
    a = ap.parse_args()
    if a.cpus < 2:
        ap.error("--cpus: at least 2 (the load on one vCPU, the daemon on another)")

    build = a.build_dir.resolve()
    cache = build / "vm-cache"
    hucprof = build / "daemon" / "hucprof"
    if not hucprof.exists():
        print(f"{hucprof} not built", file=sys.stderr)
        return 1
    results = {}
    t0 = time.monotonic()
    try:
        qemu_run.preflight()
        bins = {name: vmlib.compile_c(REPO / "tests" / "vm" / "workloads" / f"{name}.c",
                                      cache / "bin" / name) for name in ("tcp_rr", "in_cgroup")}
        plan = {"hucprof": str(hucprof), "rounds": a.rounds, "pairs": a.pairs, "n": a.n,
                **{k: str(v) for k, v in bins.items()}}
        for label in a.kernel or ["trixie-backports"]:
            k, initrd = tier_kernels.boot_files(label, cache)
            res = qemu_run.run_vm(k, initrd, Path(__file__),
                                  build / "vm-runs" / "probe-misses" / label,
                                  env={"HUCVM_BENCH_PLAN": json.dumps(plan)}, cpus=a.cpus,
                                  extra_cmdline=a.cmdline,
                                  timeout_s=6 * 3600, echo_console=a.verbose)
            mfile = res.file("measurements.json")
            if res.guest_rc != 0 or not mfile.exists():
                print(qemu_run.format_console(res), file=sys.stderr)
                return 1
            release = k.release + (f" ({a.cmdline})" if a.cmdline else "")
            results[label] = (release, json.loads(mfile.read_text()))
    except vmlib.Skip as e:
        print(f"SKIP: {e}")
        return vmlib.SKIP
    lines = report(results)
    print("\n".join(lines))
    print(f"({time.monotonic() - t0:.0f} s)")
    if a.markdown:
        a.markdown.write_text("\n".join(lines) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(guest_main() if os.environ.get("HUCVM_RESULTS") else host_main())
