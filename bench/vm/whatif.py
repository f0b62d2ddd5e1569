#!/usr/bin/env python3
"""What would hardened_usercopy=off save? hucprof's prediction against the truth, on Debian's own
kernels in QEMU (tests/vm/README.md explains the guests).

For each kernel, boots alternate A B A B ... (--pairs pairs): A with the checks on, B with
`hardened_usercopy=off` on the kernel command line. Every boot times the seeds' workloads
(bench/vm/workloads/whatif_load.c; --reps times each, interleaved):

  udp      64-byte UDP sendto/recvfrom pairs over loopback        (seed 000, the UDP flood)
  tcp      16 KiB writes into a loopback TCP stream, forked reader (seed 002, netperf TCP_STREAM)
  netlink  64 KiB NETLINK_USERSOCK messages to self               (seed 001; vmalloc'ed on 6.1)

The measured speed-up of a pair is (time per operation, checks on) / (time per operation, checks
off), from the guest clock around the loop and, second, from getrusage CPU time.

Only after the timing runs, and only in A boots, hucprof predicts the same speed-up from what it
measures, without ever seeing a checks-off boot: sampling mode (--frequencies sessions per boot at
random frequencies, see below) and probe mode with --latency, each over the same workloads. The
predictions are pooled over all A boots: sum of increases over sum of increases, the way the
recording rule hucprof_instance:usercopy_checks_off_speedup:ratio_rate5m pools a fleet.

Timing runs under `-icount shift=1,sleep=off` with one vCPU: the guest clock counts instructions
(2 ns each), so host load does not reach the measurement and idle time costs nothing. Two
consequences, both handled here:
  - every instruction costs the same, so the speed-up measured is an instruction-count speed-up
    (no caches, no lock contention across CPUs): it validates share -> speed-up, not hardware;
  - the sampling timer fires at exact instruction counts and a loop of fixed length aliases with
    it: one session at one frequency saw 2.4 %, another 6.9 % of CPU in the checks on the same
    UDP loop. Each A boot therefore samples at --frequencies different random frequencies
    (500..1000 Hz, seeded) and the pool averages the phase out.

  bench/vm/whatif.py BUILD_DIR [--kernel 6.1] [--kernel 6.12] [--pairs 5] [--reps 3]
                     [--frequencies 3] [--seed 11] [--scale 1.0] [--markdown FILE] [-v]
                     [--resume | --report-only]

BUILD_DIR as for the VM tier (daemon/hucprof built; kernel packages cached in
BUILD_DIR/vm-cache). Not part of ctest: ~3 min per pair per kernel on an idle 2-core machine,
10-12 min when it is shared with other builds (the guest's clock does not care; the host's does).
The guest side of this file runs when HUCVM_WHATIF_PLAN is set (it is the guest script).
"""

from __future__ import annotations

import argparse
import json
import os
import random
import re
import subprocess
import sys
import time
from pathlib import Path

from measurement_log import MeasurementLog

sys.dont_write_bytecode = True
HERE = Path(__file__).resolve().parent
REPO = HERE.parents[1]

# name, size, operations per run: ~1 s of guest time each under icount. hucprof watches the very
# same runs (a TCP stream of 25 000 writes is not 3 streams of 8 000: the window grows), repeated
# SAMPLING_RUNS times per sampling session for samples; latency is exact enough from one.
WORKLOADS = [("udp", 64, 50_000), ("tcp", 16_384, 8_000), ("netlink", 65_536, 2_000)]
SAMPLING_RUNS = 3
ICOUNT = ["-icount", "shift=1,sleep=off"]
# The daemon's prediction window in the guest. Between workloads the guest sleeps longer than
# that (free under icount sleep=off), so each workload's gauge covers that workload alone.
WINDOW_S = 12


# ---------------------------------------------------------------------------------------------
# Guest side
# ---------------------------------------------------------------------------------------------

def guest_main() -> int:
    sys.path.insert(0, str(REPO / "tests" / "vm" / "guest"))
    import guestlib
    tl = guestlib.tl

    results = Path(os.environ["HUCVM_RESULTS"])
    plan = json.loads(os.environ["HUCVM_WHATIF_PLAN"])
    save = MeasurementLog(results, "HUCVM-WHATIF").save

    cmdline = Path("/proc/cmdline").read_text()
    if ("hardened_usercopy=off" in cmdline.split()) != (plan["role"] == "off"):
        raise RuntimeError(f"role {plan['role']} but the kernel command line is {cmdline!r}")

    def load(name: str, n: int, size: int) -> dict:
        r = subprocess.run([plan["load"], name, str(n), str(size)], capture_output=True,
                           text=True, timeout=900, cwd="/tmp")
        m = re.match(r"whatif (\w+) ops=(\d+) bytes=\d+ wall_ns=(\d+) cpu_ns=(\d+) busy_ns=(\d+)",
                     r.stdout)
        if r.returncode != 0 or not m:
            raise RuntimeError(f"whatif_load {name} {n} {size}: rc {r.returncode}: "
                               f"{r.stdout}{r.stderr}")
        return {"workload": name, "ops": int(m.group(2)), "wall_ns": int(m.group(3)),
                "cpu_ns": int(m.group(4)), "busy_ns": int(m.group(5))}

    def deltas(before: list, after: list, kind: str) -> dict:
        def d(name: str, **labels) -> float:
            return tl.total(after, name, **labels) - tl.total(before, name, **labels)
        if kind == "sampling":
            return {"in_checks": d("usercopy_cpu_samples_total"),
                    "busy": d("usercopy_sampled_cpu_samples_total", context="kernel")
                    + d("usercopy_sampled_cpu_samples_total", context="user"),
                    "idle": d("usercopy_sampled_cpu_samples_total", context="idle")}
        return {"in_checks": d("usercopy_check_duration_seconds_sum"),
                "busy": d("usercopy_busy_cpu_seconds_total"),
                "checks": d("usercopy_check_duration_seconds_count"),
                "calls": d("usercopy_checks_total")}

    def gauge(samples: list, estimator: str) -> dict:
        g = {}
        for key, name in (("share", "usercopy_checks_busy_cpu_ratio"),
                          ("speedup", "usercopy_checks_off_speedup_ratio"),
                          ("window_s", "usercopy_prediction_window_seconds")):
            found = tl.select(samples, name, estimator=estimator)
            if found:
                g[key] = found[0][1]
        return g

    def patient_scrape(run, path: Path | None = None) -> str:
        # Under sleep=off the guest clock leaps ahead while the vCPU waits for the host (9p
        # reads on a loaded machine), so a 5 s HTTP timeout can expire with the daemon healthy.
        for attempt in range(5):
            try:
                return run.scrape_after_drain(path, timeout=300)
            except OSError as e:
                if run.daemon.proc.poll() is not None or attempt == 4:
                    raise
                print(f"HUCVM-WHATIF-RETRY scrape: {e}", flush=True)
        raise AssertionError("unreachable")

    def session(kind: str, tag: str, args: list[str], runs: int) -> None:
        run = guestlib.HucprofRun(plan["hucprof"], args + [
            "--interval", "1s", "--top-k", "1000", "--prediction.window", f"{WINDOW_S}s"],
            results / f"daemon-{tag}.log")
        try:
            run.wait_ready(timeout=300)
            for name, size, ops in plan["workloads"]:
                time.sleep(WINDOW_S + 2)  # idle: the window forgets the previous workload
                before = tl.parse_metrics(patient_scrape(run))
                if tl.total(before, "usercopy_hardened_enabled") != (plan["role"] == "on"):
                    raise RuntimeError(f"{tag}: usercopy_hardened_enabled disagrees with the "
                                       f"boot's role {plan['role']}")
                timed = [load(name, ops, size) for _ in range(runs)]
                rec = {"kind": kind, "tag": tag, "workload": name,
                       "ops": sum(t["ops"] for t in timed),
                       "wall_ns": sum(t["wall_ns"] for t in timed)}
                text = patient_scrape(run, results / f"{tag}-{name}.prom")
                after = tl.parse_metrics(text)
                rec["counters"] = deltas(before, after, kind)
                rec["gauge"] = gauge(after, kind)
                save(rec)
            if kind == "latency":
                # Where the timed check's nanoseconds go: hucprof's own nested programs run
                # inside the fentry..fexit interval (kernel.bpf_stats_enabled counts them).
                with guestlib.bpf_stats_enabled():
                    p0 = guestlib.bpf_prog_runs()
                    rec = {"kind": "probe_programs", "tag": tag} | load("udp", 20_000, 64)
                    rec["programs"] = guestlib.prog_runs_since(p0)
                save(rec)
        finally:
            rc = run.stop()
            if rc != 0:
                raise RuntimeError(f"{tag}: hucprof exited {rc}: {run.daemon.log()[-2000:]}")

    # Warm-up: first-touch costs (slab growth, page faults, socket hash setup) stay out of the
    # timed runs.
    for name, size, ops in plan["workloads"]:
        load(name, max(ops // 10, 1), size)
    for rep in range(plan["reps"]):
        for name, size, ops in plan["workloads"]:
            save({"kind": "timing", "rep": rep} | load(name, ops, size))
    if plan["role"] == "on":
        for freq in plan["frequencies"]:
            session("sampling", f"sampling-{freq}hz",
                    ["--mode", "sample", "--sample-frequency", str(freq)], SAMPLING_RUNS)
        session("latency", "latency", ["--mode", "probe", "--probe.attach", "fentry",
                                       "--latency"], 1)
    return 0


# ---------------------------------------------------------------------------------------------
# Host side
# ---------------------------------------------------------------------------------------------

def boot_set(labels: list[str], cache: Path) -> tuple[Path, list]:
    """What a host side needs to boot `labels` with the seeds' workloads (this file's and
    probe_overhead.py's): the workload binary and each kernel's boot files. vmlib.Skip when the
    host lacks what it takes."""
    sys.path.insert(0, str(REPO / "tests" / "vm"))
    import tier_kernels
    import qemu_run
    import vmlib
    qemu_run.preflight()
    load = vmlib.compile_c(HERE / "workloads" / "whatif_load.c", cache / "bin" / "whatif_load")
    return load, [tier_kernels.boot_files(label, cache) for label in labels]


def host_main() -> int:
    sys.path.insert(0, str(REPO / "tests" / "vm"))
    import tier_kernels
    import qemu_run
    import vmlib
    import whatif_stats as ws

    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("build_dir", type=Path)
    ap.add_argument("--kernel", action="append", choices=[k.label for k in tier_kernels.KERNELS],
                    help="6.1 and/or 6.12 (default: both)")
    ap.add_argument("--pairs", type=int, default=5, help="A/B boot pairs per kernel (>= 2)")
    ap.add_argument("--reps", type=int, default=3, help="timed runs per workload per boot")
    ap.add_argument("--frequencies", type=int, default=3,
                    help="sampling sessions per checks-on boot, each at a random frequency")
    ap.add_argument("--seed", type=int, default=11, help="for the sampling frequencies")
    ap.add_argument("--scale", type=float, default=1.0, help="multiplies every operation count")
    ap.add_argument("--markdown", type=Path, help="also write the result table here")
    ap.add_argument("--resume", action="store_true",
                    help="keep boots of an earlier run that finished (same plan), boot the rest")
    ap.add_argument("--report-only", action="store_true",
                    help="boot nothing: print the table from BUILD_DIR/vm-runs/whatif")
    ap.add_argument("--verbose", "-v", action="store_true", help="echo the guest consoles")
    a = ap.parse_args()
    if a.pairs < 2:
        ap.error("--pairs must be at least 2: the noise band needs two boots of each kind")

    build = a.build_dir.resolve()
    cache = build / "vm-cache"
    hucprof = build / "daemon" / "hucprof"
    if not hucprof.exists():
        print(f"{hucprof} not built", file=sys.stderr)
        return 1
    labels = a.kernel or [k.label for k in tier_kernels.KERNELS]
    try:
        load, kernels = boot_set(labels, cache)
    except vmlib.Skip as e:
        print(f"SKIP: {e}")
        return vmlib.SKIP

    workloads = [(n, s, max(int(ops * a.scale), 1)) for n, s, ops in WORKLOADS]
    rng = random.Random(a.seed)
    out_dir = build / "vm-runs" / "whatif"
    t0 = time.monotonic()
    reused = 0
    boots: dict[str, list] = {}
    for k, initrd in kernels:
        boots[k.label] = []
        for pair in range(a.pairs):
            for role in ("on", "off"):
                name = f"{k.label}-pair{pair}-{role}"
                if a.report_only:
                    mfile = out_dir / name / "measurements.json"
                    if not mfile.exists():
                        print(f"--report-only: {mfile} is missing", file=sys.stderr)
                        return 1
                    boots[k.label].append(ws.Boot(k.label, pair, role,
                                                  json.loads(mfile.read_text())))
                    continue
                plan = {"role": role, "load": str(load), "hucprof": str(hucprof),
                        "workloads": workloads, "reps": a.reps,
                        "frequencies": [rng.randrange(500, 1001) for _ in range(a.frequencies)]
                        if role == "on" else []}
                done = out_dir / name / "measurements.json"
                kept = out_dir / name / "plan.json"
                rc = out_dir / name / ".hucvm-rc"
                if a.resume and rc.exists() and rc.read_text().strip() == "0" \
                        and done.exists() and kept.exists() \
                        and json.loads(kept.read_text()) == json.loads(json.dumps(plan)):
                    vmlib.log(f"{name}: kept from an earlier run (--resume)")
                    reused += 1
                    boots[k.label].append(ws.Boot(k.label, pair, role,
                                                  json.loads(done.read_text())))
                    continue
                res = qemu_run.run_vm(
                    k, initrd, Path(__file__), out_dir / name,
                    extra_cmdline="hardened_usercopy=off" if role == "off" else "",
                    env={"HUCVM_WHATIF_PLAN": json.dumps(plan)}, cpus=1, qemu_args=ICOUNT,
                    timeout_s=3600, echo_console=a.verbose)
                mfile = res.file("measurements.json")
                if res.guest_rc != 0 or not mfile.exists():
                    print(qemu_run.format_console(res, 60), file=sys.stderr)
                    print(f"FAIL: {name}: guest exit {res.guest_rc}")
                    return 1
                boots[k.label].append(ws.Boot(k.label, pair, role, json.loads(mfile.read_text())))
                res.file("plan.json").write_text(json.dumps(plan))
                vmlib.log(f"{name}: done, {time.monotonic() - t0:.0f} s so far")

    # A run that kept boots, or booted none, did not take the whole bench's time: say nothing.
    whole = not a.report_only and not reused
    lines = report(boots, a, {k.label: k.release for k, _ in kernels},
                   time.monotonic() - t0 if whole else None)
    print("\n".join(lines))
    (out_dir / "summary.json").write_text(json.dumps(
        {label: [b.__dict__ for b in bs] for label, bs in boots.items()}, indent=1))
    if a.markdown:
        a.markdown.write_text("\n".join(lines) + "\n")
    return 0


def report(boots: dict, a, releases: dict, wall_s: float | None) -> list[str]:
    import whatif_stats as ws

    cmd = "bench/vm/whatif.py BUILD_DIR " + " ".join(
        f"--kernel {k}" for k in boots) + f" --pairs {a.pairs} --reps {a.reps} " \
        f"--frequencies {a.frequencies} --seed {a.seed}" + (f" --scale {a.scale}" if a.scale != 1 else "")
    took = f"{wall_s / 60:.0f} min, " if wall_s is not None else ""
    out = [f"`{cmd}` ({took}QEMU TCG -icount shift=1,sleep=off, 1 vCPU; "
           + ", ".join(f"{k} = {r}" for k, r in releases.items()) + ")", "",
           "| kernel | workload | measured speed-up, median (pairs) | noise band | "
           "CPU-time speed-up | predicted, sampling (per boot) | error | predicted, "
           "latency | error | verdict |",
           "|---|---|---|---|---|---|---|---|---|---|"]
    notes = []
    for label, bs in boots.items():
        for name, *_ in WORKLOADS:
            m = ws.measured(bs, name, "wall_ns")
            c = ws.measured(bs, name, "cpu_ns")
            s = ws.predicted(bs, name, "sampling")
            lat = ws.predicted(bs, name, "latency")
            per_boot = (f"{min(s.per_boot):.4f}-{max(s.per_boot):.4f}" if s.per_boot else "n/a")
            out.append(
                f"| {label} | {name} | {ws.fmt_x(m.median)} "
                f"({', '.join(ws.fmt_x(x) for x in m.speedups)}) | ±{100 * m.noise:.2f} % | "
                f"{ws.fmt_x(c.median)} | {ws.fmt_x(s.speedup)} ({per_boot}) | "
                f"{ws.fmt_pct(ws.gain_error(s.speedup, m.median))} | {ws.fmt_x(lat.speedup)} | "
                f"{ws.fmt_pct(ws.gain_error(lat.speedup, m.median))} | {ws.verdict(m, s)} |")
            checks = sum(r["counters"].get("checks", 0) for b in bs for r in b.records
                         if r["kind"] == "latency" and r["workload"] == name)
            ops = sum(r["ops"] for b in bs for r in b.records
                      if r["kind"] == "latency" and r["workload"] == name)
            on = [ws.per_op(b.records, name, "wall_ns") for b in bs if b.role == "on"]
            off = [ws.per_op(b.records, name, "wall_ns") for b in bs if b.role == "off"]
            lat_wall = sum(r["wall_ns"] for b in bs for r in b.records
                           if r["kind"] == "latency" and r["workload"] == name)
            boot_errors = [ws.gain_error(x, m.median) for x in s.per_boot]
            boot_errors = [e for e in boot_errors if e is not None]
            if checks and ops and on and off:
                on_ns = sum(on) / len(on)
                true_ns = (on_ns - sum(off) / len(off)) / (checks / ops)
                # The probes also slow what the denominator counts: busy time grows with them.
                notes.append(f"{label} {name}: {checks / ops:.2f} checks per operation; a check "
                             f"costs {true_ns:.0f} ns of guest time (on - off, per check), "
                             f"hucprof --latency timed {1e9 * lat.in_checks / checks:.0f} ns, and "
                             f"with its probes attached an operation took "
                             f"{lat_wall / ops / on_ns:.2f}x as long; "
                             f"sampling: {s.in_checks:.0f} of {s.busy:.0f} busy samples in the "
                             f"checks over {s.sessions} sessions (counting error "
                             f"±{100 / max(s.in_checks, 1) ** 0.5:.0f} %, 1/sqrt(n)), one boot's "
                             f"answer alone off by {ws.fmt_pct(min(boot_errors, default=None))} "
                             f"to {ws.fmt_pct(max(boot_errors, default=None))}; "
                             "daemon gauge vs counters: "
                             f"largest gap {ws.fmt_x(s.gauge_gap, 5)} (sampling), "
                             f"{ws.fmt_x(lat.gauge_gap, 5)} (latency)")
        for b in bs:
            for r in b.records:
                if r["kind"] != "probe_programs":
                    continue
                checks = r["programs"].get("huc_fentry_check_object_size", [0, 0])[0]
                if not checks:
                    continue
                nested = sum(ns for n, (_, ns) in r["programs"].items()
                             if n.startswith("huc_fentry_") and n != "huc_fentry_check_object_size")
                notes.append(f"{label} pair {b.pair}: hucprof's sub-check programs run "
                             f"{nested / checks:.0f} ns per check inside the timed interval "
                             "(kernel.bpf_stats_enabled, udp)")
                break
    out += ["", "speed-up = guest time per operation with the checks on / with "
            "hardened_usercopy=off; error = relative error of the predicted gain (speed-up - 1); "
            "noise band = largest spread between two boots of the same kind; verdict only where "
            "every pair's gain exceeds the noise band, goal 30 %.", ""]
    out += [f"- {n}" for n in notes]
    return out


if __name__ == "__main__":
    sys.exit(guest_main() if "HUCVM_WHATIF_PLAN" in os.environ and "HUCVM_RESULTS" in os.environ
             else host_main())
