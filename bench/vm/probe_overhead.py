#!/usr/bin/env python3
"""What probe mode costs the workloads it watches, against the floor and the alternatives, on
Debian's own kernels in QEMU (tests/vm/README.md explains the guests).

One boot per kernel, one vCPU whose clock counts instructions (-icount shift=1,sleep=off: host
load does not reach the numbers, idle time costs nothing). In it, the seeds' three workloads
(bench/vm/workloads/whatif_load.c, each timed around its own loop: no exec or file I/O inside the
timed interval) run with nothing attached and with each variant attached to __check_object_size:

  empty_fentry     bpftrace `kfunc:__check_object_size { }`: the trampoline alone, the floor
  kprobe_hist      the kernel's kprobe event with a hist trigger keyed on to_user (2 buckets):
                   the bare counter (tests/vm/guest/refprobe.sh)
  bpftrace_kstack  bpftrace `kfunc:__check_object_size { @[kstack] = count(); }`
  hucprof          `hucprof run --mode probe` with its default flags (fentry, sub-checks
                   classified inside the check on x86_64)
  hucprof_attach   ... --probe.subchecks attach (a probe on each sub-check function instead)
  hucprof_latency  ... --latency (fexit timing of every check)
  hucprof_kprobe   ... --probe.attach kprobe
  hucprof_workloads ... --probe.workloads (each check keyed by its task's cgroup too)
  hucprof_norescue hucprof with default flags and the rescue program off (HUCPROF_BENCH_RESCUE=off):
                   where the kernel can preempt a run of the check's program, what the rescue
                   program costs per check (docs/design.md, "Checks the program never saw")
  LABEL            --hucprof LABEL=BINARY: another hucprof build with default flags (an A/B)

With --stages, also hucprof (default flags) stopped after each stage of the check's program
(HUCPROF_BENCH_STOP_AFTER, bpf/probe.bpf.c; the verifier drops the rest at load), which says
where the time per check goes: cumulative, each stage with the ones before it:

  hucprof_upto_entry   the program entered, nothing more
  hucprof_upto_caller  + the immediate caller read from the stack or the trampoline's frame
  hucprof_upto_key     + the per-CPU scratch looked up, the syscall number and direction
  hucprof_upto_count   + counted: a repeat through its recent entry (the words above its caller
                       compared, its way of the per-CPU table), else the call site along the
                       copy helpers' learned offsets and the key's way (or the shared hash)
  (hucprof itself: + the sub-checks classified: the struct page read on slab copies)

Rounds are interleaved: none V1 none V2 ... (--rounds times), each variant's slowdown taken
against the baseline run right before it, per workload; the table gives the median over rounds.
A last round with kernel.bpf_stats_enabled=1 gives each BPF program's runs per operation and ns
per run (instruction-ns: under icount one instruction is 2 ns). The daemon drains every
--interval (60 s): no drain falls inside a timed loop, so the timed cost is the kernel side's.

  bench/vm/probe_overhead.py BUILD_DIR [--kernel 6.1] [--kernel 6.12] [--rounds 3]
                             [--scale 0.5] [--variant NAME]... [--hucprof LABEL=BINARY]...
                             [--stages] [--markdown FILE] [-v]

--kernel takes any label of tests/vm/tier_kernels.py's KERNELS (default: all of them). BUILD_DIR as
for the VM tier (daemon/hucprof built; kernel packages cached in BUILD_DIR/vm-cache); bpftrace
on the host (scripts/install-deps.sh installs it; the guest runs the host's root).

Not part of ctest. In the guest the same file runs the measurements (it is the guest script).
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import statistics
import subprocess
import sys
import time
from pathlib import Path

sys.dont_write_bytecode = True
HERE = Path(__file__).resolve().parent
REPO = HERE.parents[1]
sys.path.insert(0, str(HERE))
from measurement_log import MeasurementLog  # noqa: E402 (after the path)
from whatif import ICOUNT, WORKLOADS, boot_set  # noqa: E402  (the seeds' workloads, icount-sized)

HUCPROF_FLAGS = {
    "hucprof": [],
    "hucprof_attach": ["--probe.subchecks", "attach"],
    "hucprof_latency": ["--latency"],
    "hucprof_kprobe": ["--probe.attach", "kprobe"],
    "hucprof_workloads": ["--probe.workloads"],
}
# Variants that run the default build with the environment set (benchmark-only settings).
HUCPROF_ENV = {"hucprof_norescue": {"HUCPROF_BENCH_RESCUE": "off"}}
VARIANTS = ["empty_fentry", "kprobe_hist", "bpftrace_kstack", *HUCPROF_FLAGS, *HUCPROF_ENV]
# --stages: default flags, the check's program stopped after stage N (probe.bpf.c's
# HUC_STAGE_*), as the environment tells the daemon.
STAGES = {"hucprof_upto_entry": 1, "hucprof_upto_caller": 2, "hucprof_upto_key": 3,
          "hucprof_upto_count": 4}
STOP_AFTER_ENV = "HUCPROF_BENCH_STOP_AFTER"
BPFTRACE = {
    "empty_fentry": "kfunc:__check_object_size { }",
    "bpftrace_kstack": "kfunc:__check_object_size { @[kstack] = count(); }",
}
INTERVAL = "60s"


# ---------------------------------------------------------------------------------------------
# Guest side
# ---------------------------------------------------------------------------------------------

class Bpftrace:
    """bpftrace running `program`; ready once its BEGIN probe has printed (bpftrace fires BEGIN
    after every other probe is attached). Output goes to the guest's /tmp, never 9p."""

    def __init__(self, program: str, tag: str, err: Path):
        self.out = Path("/tmp") / f"bpftrace-{tag}.txt"
        # stdout, not -o: bpftrace 0.17 does not flush an -o file, whatever -B says.
        self.proc = subprocess.Popen(
            ["bpftrace", "-B", "none", "-e",
             'BEGIN { printf("hucvm-attached\\n"); } ' + program],
            stdout=open(self.out, "w"), stderr=open(err, "w"))
        # Generous: under sleep=off the guest clock leaps while bpftrace's libraries come in
        # over 9p.
        deadline = time.monotonic() + 4 * 3600
        while "hucvm-attached" not in (self.out.read_text() if self.out.exists() else ""):
            if self.proc.poll() is not None or time.monotonic() > deadline:
                raise RuntimeError(f"bpftrace did not attach ({self.proc.poll()}): "
                                   + err.read_text()[-2000:])
            time.sleep(0.2)

    def stop(self) -> int:
        self.proc.send_signal(2)  # SIGINT: bpftrace prints its maps and detaches
        try:
            return self.proc.wait(timeout=300)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            return self.proc.wait()


def all_prog_runs() -> dict[str, tuple[int, int]]:
    """Every loaded BPF program by id: (name, runs, run time in ns) so far."""
    r = subprocess.run(["bpftool", "-j", "prog", "show"], capture_output=True, text=True,
                       check=True)
    return {str(p["id"]): (p.get("name", "?"), p.get("run_cnt", 0), p.get("run_time_ns", 0))
            for p in json.loads(r.stdout)}


def shared_hash_calls() -> dict:
    """What the checks counted in probe mode's shared hash (`sites`) so far, not in the per-CPU
    table of hot call sites: a check lands there only when its set of the table is full, so
    calls here say the table missed (bpftool decodes the value by its BTF)."""
    r = subprocess.run(["bpftool", "-j", "map", "dump", "name", "sites"], capture_output=True,
                       text=True)
    if r.returncode != 0:
        return {"error": r.stderr.strip()[-300:]}
    entries = json.loads(r.stdout or "[]")
    calls = sum(int(e.get("formatted", {}).get("value", {}).get("calls", 0)) for e in entries)
    return {"keys": len(entries), "calls": calls}


def dump_xlated(progs: dict[str, tuple[int, int]], out: Path) -> None:
    """The verified instructions of the hucprof program that ran most (what the JIT compiles;
    Debian's bpftool cannot disassemble JITed code), for reading what a check pays."""
    runs = {i: c for i, (n, c, _) in progs.items() if n.startswith("huc_")}
    if runs:
        busiest = max(runs, key=runs.get)
        r = subprocess.run(["bpftool", "prog", "dump", "xlated", "id", busiest, "linum"],
                           capture_output=True, text=True)
        out.write_text(r.stdout + r.stderr)


def guest_main() -> int:
    sys.path.insert(0, str(REPO / "tests" / "vm" / "guest"))
    import guestlib
    tl = guestlib.tl

    results = Path(os.environ["HUCVM_RESULTS"])
    plan = json.loads(os.environ["HUCVM_BENCH_PLAN"])
    save = MeasurementLog(results, "HUCVM-BENCH").save

    def load(name: str, n: int, size: int) -> dict:
        r = subprocess.run([plan["load"], name, str(n), str(size)], capture_output=True,
                           text=True, timeout=1800, cwd="/tmp")
        m = re.match(r"whatif (\w+) ops=(\d+) bytes=\d+ wall_ns=(\d+)", r.stdout)
        if r.returncode != 0 or not m:
            raise RuntimeError(f"whatif_load {name} {n} {size}: rc {r.returncode}: "
                               f"{r.stdout}{r.stderr}")
        return {"workload": name, "ops": int(m.group(2)), "wall_ns": int(m.group(3))}

    bare = guestlib.RefProbe(results)
    bare.call("ref_init")
    bare.call("ref_probe_unstacked", "bare", "__check_object_size", "to_user=%dx:u8", "to_user")

    def attached(variant: str, tag: str):
        """Attach the variant; returns a function that detaches it and returns what it saw."""
        if variant == "none":
            return lambda: {}
        if variant == "kprobe_hist":
            bare.call("ref_start")
            return lambda: (bare.call("ref_stop", tag), {})[1]
        if variant in BPFTRACE:
            bt = Bpftrace(BPFTRACE[variant], tag, results / f"bpftrace-{tag}.err")
            return lambda: {"rc": bt.stop()}
        binary, flags, env = plan["hucprof"][variant]
        log = Path("/tmp") / f"daemon-{tag}.log"
        saved = {k: os.environ.get(k) for k in env}
        os.environ.update(env)
        try:
            run = guestlib.HucprofRun(binary, ["--mode", "probe", "--interval", INTERVAL,
                                               "--top-k", "1000", *flags], log)
        finally:
            for k, v in saved.items():
                if v is None:
                    os.environ.pop(k, None)
                else:
                    os.environ[k] = v
        run.wait_ready(timeout=4 * 3600)

        def stop() -> dict:
            seen = {}
            try:
                metrics = tl.parse_metrics(run.scrape_after_drain(timeout=600))
                seen["checks_counted"] = tl.total(metrics, "usercopy_checks_total")
                seen["attached"] = sorted(
                    f"{labels['target']}:{labels['mode']}" for labels, v in
                    tl.select(metrics, "hucprof_probe_attached") if v == 1)
                seen["helper_calls"] = {labels["method"]: v for labels, v in
                                        tl.select(metrics, "hucprof_probe_helper_calls_total")}
            finally:
                seen["rc"] = run.stop()
                shutil.copy(log, results / log.name)
            if seen["rc"] != 0:
                raise RuntimeError(f"{tag}: hucprof exited {seen['rc']}: {log.read_text()[-2000:]}")
            return seen
        return stop

    def measure(variant: str, rnd: int, stats: bool = False) -> None:
        tag = f"{variant}-{rnd}"
        detach = attached(variant, tag)
        runs = []
        try:
            for name, size, ops in plan["workloads"]:
                p0 = all_prog_runs() if stats else {}
                rec = load(name, ops, size)
                if stats:
                    after = all_prog_runs()
                    rec["programs"] = {
                        f"{n} #{i}": [c - p0.get(i, (n, 0, 0))[1], ns - p0.get(i, (n, 0, 0))[2]]
                        for i, (n, c, ns) in after.items() if c - p0.get(i, (n, 0, 0))[1] > 0}
                    if variant in plan["hucprof"]:
                        rec["shared_hash"] = shared_hash_calls()
                        dump_xlated(after, results / f"xlated-{tag}.txt")
                        if plan.get("dump_maps"):
                            for m in ("sites", "scratch"):
                                subprocess.run(["bpftool", "-j", "map", "dump", "name", m],
                                               stdout=open(results / f"{m}-{tag}-{name}.json",
                                                           "w"))
                runs.append(rec)
        finally:
            seen = detach()
        save({"variant": variant, "round": rnd, "stats": stats, "runs": runs} | seen)

    try:
        for name, size, ops in plan["workloads"]:  # warm-up: first-touch costs stay out
            load(name, max(ops // 5, 1), size)
        for rnd in range(plan["rounds"]):
            for variant in plan["variants"]:
                measure("none", rnd)
                measure(variant, rnd)
        with guestlib.bpf_stats_enabled():
            for variant in plan["variants"]:
                if variant != "kprobe_hist":
                    measure(variant, plan["rounds"], stats=True)
    finally:
        bare.close()
    return 0


# ---------------------------------------------------------------------------------------------
# Host side
# ---------------------------------------------------------------------------------------------

def host_main() -> int:
    sys.path.insert(0, str(REPO / "tests" / "vm"))
    import tier_kernels
    import qemu_run
    import vmlib

    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("build_dir", type=Path)
    ap.add_argument("--kernel", action="append", choices=[k.label for k in tier_kernels.KERNELS],
                    help="a label of tests/vm/tier_kernels.py's KERNELS (default: every one)")
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--scale", type=float, default=0.5,
                    help="multiplies whatif.py's operation counts (1.0: ~1 s of guest time each)")
    ap.add_argument("--variant", action="append", choices=[*VARIANTS, *STAGES],
                    help="measure only these (default: all; --hucprof labels come on top)")
    ap.add_argument("--hucprof", action="append", default=[], metavar="LABEL=BINARY",
                    help="another hucprof build, with default flags")
    ap.add_argument("--stages", action="store_true",
                    help="also hucprof stopped after each stage of its check program")
    ap.add_argument("--dump-maps", action="store_true",
                    help="after each workload of the bpf_stats round, save bpftool's dump of "
                         "hucprof's sites hash and scratch (the hot call sites' table) in the "
                         "results")
    ap.add_argument("--out", default="probe-overhead",
                    help="results under BUILD_DIR/vm-runs/OUT/KERNEL (two runs at once: two names)")
    ap.add_argument("--markdown", type=Path, help="also write the tables here")
    ap.add_argument("--report-only", action="store_true",
                    help="boot nothing: print the tables of the last run in BUILD_DIR/vm-runs")
    ap.add_argument("--verbose", "-v", action="store_true", help="echo the guest console")
    a = ap.parse_args()

    build = a.build_dir.resolve()
    cache = build / "vm-cache"
    hucprof = (build / "daemon" / "hucprof").resolve()
    binaries = {v: (str(hucprof), flags, {}) for v, flags in HUCPROF_FLAGS.items()}
    binaries |= {v: (str(hucprof), [], {STOP_AFTER_ENV: str(n)}) for v, n in STAGES.items()}
    binaries |= {v: (str(hucprof), [], env) for v, env in HUCPROF_ENV.items()}
    for extra in a.hucprof:
        label, sep, path = extra.partition("=")
        if not sep or not re.fullmatch(r"[a-z0-9_]+", label) or label in binaries:
            ap.error(f"--hucprof {extra!r}: want LABEL=BINARY, LABEL of [a-z0-9_] and not a "
                     "built-in variant")
        binaries[label] = (str(Path(path).resolve()), [], {})
    variants = ((a.variant or VARIANTS) + (list(STAGES) if a.stages else [])
                + [e.partition("=")[0] for e in a.hucprof])
    for v in variants:
        if v in binaries and not Path(binaries[v][0]).exists():
            print(f"{binaries[v][0]} not built", file=sys.stderr)
            return 1
    if any(v in BPFTRACE for v in variants) and not shutil.which("bpftrace"):
        print("bpftrace is not installed (scripts/install-deps.sh installs it)", file=sys.stderr)
        return 1
    labels = a.kernel or [k.label for k in tier_kernels.KERNELS]
    out_root = build / "vm-runs" / a.out
    workloads = [(n, s, max(int(ops * a.scale), 1)) for n, s, ops in WORKLOADS]
    t0 = time.monotonic()
    results = {}
    if a.report_only:
        for label in labels:
            results[label] = json.loads((out_root / label / "summary.json").read_text())
    else:
        try:
            load, kernels = boot_set(labels, cache)
        except vmlib.Skip as e:
            print(f"SKIP: {e}")
            return vmlib.SKIP
        plan = {"load": str(load), "workloads": workloads, "rounds": a.rounds,
                "dump_maps": a.dump_maps,
                "variants": variants, "hucprof": {v: binaries[v] for v in variants
                                                  if v in binaries}}
        for k, initrd in kernels:
            res = qemu_run.run_vm(k, initrd, Path(__file__), out_root / k.label,
                               env={"HUCVM_BENCH_PLAN": json.dumps(plan)}, cpus=1,
                               qemu_args=ICOUNT, timeout_s=6 * 3600, echo_console=a.verbose)
            mfile = res.file("measurements.json")
            if res.guest_rc != 0 or not mfile.exists():
                print(qemu_run.format_console(res, 80), file=sys.stderr)
                print(f"FAIL: {k.label}: guest exit {res.guest_rc}")
                return 1
            results[k.label] = {"release": k.release, "plan": plan,
                                "records": json.loads(mfile.read_text()),
                                "wall_s": res.wall_s}
            res.file("summary.json").write_text(json.dumps(results[k.label], indent=1))
            vmlib.log(f"{k.label}: done, {time.monotonic() - t0:.0f} s so far")
    lines = report(results, a)
    print("\n".join(lines))
    if a.markdown:
        a.markdown.write_text("\n".join(lines) + "\n")
    return 0


def per_op(rec: dict, workload: str) -> float:
    run = next(r for r in rec["runs"] if r["workload"] == workload)
    return run["wall_ns"] / run["ops"]


def report(results: dict, a) -> list[str]:
    """Per kernel and workload: each variant's slowdown (median over rounds, against the baseline
    run right before it), what it adds per check in instruction-ns, that as a multiple of the
    empty fentry program's, and its BPF programs' runs per operation and ns per run."""
    out = []
    for label, r in results.items():
        recs, plan = r["records"], r["plan"]
        chosen = [v for v in plan["variants"] if v in VARIANTS]
        cmd = (f"bench/vm/probe_overhead.py BUILD_DIR --kernel {label} --rounds "
               f"{plan['rounds']}" + (f" --scale {a.scale}" if a.scale != 0.5 else "")
               + ("" if chosen == VARIANTS else "".join(f" --variant {v}" for v in chosen))
               + (" --stages" if any(v in STAGES for v in plan["variants"]) else ""))
        out += [f"### Debian {label} ({r['release']}): `{cmd}`", "",
                "QEMU TCG `-icount shift=1,sleep=off`, 1 vCPU; slowdown = time per operation "
                "with the variant / without, median of the rounds (each against the baseline "
                "right before it); added = extra instruction-ns per `__check_object_size` call "
                "(2 ns = 1 instruction); BPF = the variant's programs with "
                "kernel.bpf_stats_enabled=1: runs per operation, ns per run.", ""]
        for name, size, ops in plan["workloads"]:
            checks_per_op = None
            stats = {}
            for rec in recs:
                if not rec["stats"]:
                    continue
                run = next(x for x in rec["runs"] if x["workload"] == name)
                progs = {n: (c / run["ops"], ns / max(c, 1)) for n, (c, ns) in
                         run.get("programs", {}).items()}
                stats[rec["variant"]] = progs
                if rec["variant"] == "empty_fentry" and progs:
                    checks_per_op = max(p[0] for p in progs.values())
            added = {}
            rows = []
            for variant in plan["variants"]:
                slow = []
                for rnd in range(plan["rounds"]):
                    idx = next((i for i, m in enumerate(recs) if m["variant"] == variant
                                and m["round"] == rnd and not m["stats"]), None)
                    if idx is None:
                        continue
                    base = [m for m in recs[:idx] if m["variant"] == "none"][-1]
                    slow.append(per_op(recs[idx], name) / per_op(base, name))
                if not slow:
                    continue
                med = statistics.median(slow)
                base_ns = statistics.median(per_op(m, name) for m in recs
                                            if m["variant"] == "none")
                added[variant] = ((med - 1) * base_ns / checks_per_op) if checks_per_op else None
                rows.append((variant, med, slow))
            floor = added.get("empty_fentry")
            out += [f"**{name}** ({size} B x {ops} per run; "
                    + (f"{checks_per_op:.2f} checks per operation" if checks_per_op
                       else "checks per operation unknown (no empty_fentry stats)") + ")", "",
                    "| variant | slowdown | per round | added ns per check | added / empty "
                    "fentry's | BPF: runs/op, ns/run |", "|---|---|---|---|---|---|"]
            for variant, med, slow in rows:
                ns = added.get(variant)
                progs = "; ".join(f"{n.split(' #')[0]} {c:.2f}, {t:.0f}" for n, (c, t) in
                                  sorted(stats.get(variant, {}).items(),
                                         key=lambda kv: -kv[1][0] * kv[1][1]))
                out.append(f"| {variant} | {med:.4f} | "
                           f"{', '.join(f'{s:.4f}' for s in slow)} | "
                           f"{'' if ns is None else f'{ns:.0f}'} | "
                           f"{'' if ns is None or not floor else f'{ns / floor:.1f}'} | "
                           f"{progs or '—'} |")
            out.append("")
        counted = [(m["variant"], m.get("checks_counted"), m.get("helper_calls"))
                   for m in recs if "checks_counted" in m and not m["stats"]]
        if counted:
            out.append("hucprof sessions, checks counted and helper-called checks by method: "
                       + "; ".join(f"{v} {c:.0f} {h}" for v, c, h in counted[:len(HUCPROF_FLAGS)
                                                                              + 4]))
        if r.get("wall_s"):
            out.append(f"(host wall time of the boot: {r['wall_s'] / 60:.0f} min)")
        out.append("")
    return out


if __name__ == "__main__":
    sys.exit(guest_main() if "HUCVM_BENCH_PLAN" in os.environ and "HUCVM_RESULTS" in os.environ
             else host_main())
