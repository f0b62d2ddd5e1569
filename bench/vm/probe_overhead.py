#!/usr/bin/env python3
"""What probe mode costs the workload it watches, on a real Debian kernel (QEMU, see
tests/vm/README.md): a UDP loopback flood's received datagrams per second

  none      nothing attached (baseline)
  kprobe    `hucprof run --mode probe --probe.attach kprobe`
  fentry    `hucprof run --mode probe --probe.attach fentry`
  stackref  the kernel's own kprobe event on __check_object_size with a hist trigger keyed on
            the stack (tests/vm/guest/refprobe.sh: what "count per stack" costs without hucprof)
  bareref   the same kprobe event with a hist keyed on to_user only (2 buckets): the kprobe
            and a counter, no stack walk

each run for a few seconds, the baseline re-measured right before every variant (none A none B
none C, repeated --rounds times), reported as the median ratio variant / baseline. Numbers to
compare with (docs/design.md): a stack-keyed kprobe made a flood 2.8x slower, a bare kprobe 1.23x.
Then, once per hucprof mode, a diagnostic flood with kernel.bpf_stats_enabled=1: BPF program
runs per received datagram and mean ns per run, per program (where hucprof's cost goes).

  bench/vm/probe_overhead.py BUILD_DIR [--kernel 6.1] [--rounds 5] [--seconds 4] [-v]

BUILD_DIR as for the VM tier (daemon/hucprof, tests/tools/huc_udp_flood built; kernel packages
cached in BUILD_DIR/vm-cache). Root needed on the host only to download a kernel package the
first time. Not part of ctest: timings under TCG are noisy and slow; read the ratios, not the
absolute rates. In the guest the same file runs the measurements (it is the guest script).
"""

from __future__ import annotations

import argparse
import json
import os
import re
import statistics
import subprocess
import sys
import time
from pathlib import Path

sys.dont_write_bytecode = True
HERE = Path(__file__).resolve().parent
REPO = HERE.parents[1]
VARIANTS = ["kprobe", "fentry", "stackref", "bareref"]


# ---------------------------------------------------------------------------------------------
# Guest side
# ---------------------------------------------------------------------------------------------

def guest_main() -> int:
    sys.path.insert(0, str(REPO / "tests" / "vm" / "guest"))
    import guestlib

    results = Path(os.environ["HUCVM_RESULTS"])
    plan = json.loads(os.environ["HUCVM_BENCH_PLAN"])
    out_path = results / "measurements.json"
    measurements = []

    def flood(tag: str) -> dict:
        r = subprocess.run([plan["flood"], "--seconds", str(plan["seconds"]), "--payload",
                            str(plan["payload"])], capture_output=True, text=True, timeout=120)
        m = re.search(r"sent (\d+), received (\d+)", r.stdout)
        if r.returncode != 0 or not m:
            raise RuntimeError(f"flood failed ({r.returncode}): {r.stdout} {r.stderr}")
        return {"sent": int(m.group(1)), "received": int(m.group(2))}

    def cpu_seconds(pid: int) -> float:
        with open(f"/proc/{pid}/stat") as f:
            fields = f.read().rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")

    ref = guestlib.RefProbe(results)
    ref.call("ref_init")
    ref.call("ref_probe", "ucheck", "__check_object_size", "n=%si:u64 to_user=%dx:u8",
             "to_user", "n")

    # The bare counter in a reference shell of its own, so ref_start/ref_stop of one variant
    # never arm the other's trigger.
    bare = guestlib.RefProbe(results)
    bare.call("ref_init")
    bare.call("ref_probe_unstacked", "bare", "__check_object_size", "to_user=%dx:u8", "to_user")

    def measure(variant: str, rnd: int, diagnose: bool = False) -> None:
        rec = {"variant": variant, "round": rnd}
        if variant == "none":
            rec |= flood(variant)
        elif variant == "stackref":
            ref.call("ref_start")
            rec |= flood(variant)
            ref.call("ref_stop", f"{variant}-{rnd}")
        elif variant == "bareref":
            bare.call("ref_start")
            rec |= flood(variant)
            bare.call("ref_stop", f"{variant}-{rnd}")
        else:
            run = guestlib.HucprofRun(plan["hucprof"], ["--mode", "probe", "--probe.attach",
                                                        variant, "--interval", "1s"],
                                      results / f"daemon-{variant}-{rnd}.log")
            try:
                run.wait_ready()
                c0 = cpu_seconds(run.daemon.proc.pid)
                s0 = guestlib.bpf_prog_runs() if diagnose else {}
                rec |= flood(variant)
                if diagnose:
                    rec["progs"] = guestlib.prog_runs_since(s0)
                    rec["variant"] = variant + "+stats"
                rec["daemon_cpu_s"] = cpu_seconds(run.daemon.proc.pid) - c0
                text = run.scrape_after_drain()
                tl = guestlib.tl
                metrics = tl.parse_metrics(text)
                rec["checks_counted"] = tl.total(metrics, "usercopy_checks_total",
                                                 callsite="udp_recvmsg")
                # Which path found the call sites of helper-called checks (the cost claim).
                rec["helper_calls"] = {labels["method"]: v for labels, v in
                                       tl.select(metrics, "hucprof_probe_helper_calls_total")}
            finally:
                rec["daemon_rc"] = run.stop()
        measurements.append(rec)
        out_path.write_text(json.dumps(measurements, indent=1))
        print(f"HUCVM-BENCH {json.dumps(rec)}", flush=True)

    try:
        flood("warm-up")
        for rnd in range(plan["rounds"]):
            for variant in VARIANTS:
                measure("none", rnd)
                measure(variant, rnd)
        with guestlib.bpf_stats_enabled():
            for variant in ("kprobe", "fentry"):
                measure(variant, plan["rounds"], diagnose=True)
    finally:
        ref.close()
        bare.close()
    return 0


# ---------------------------------------------------------------------------------------------
# Host side
# ---------------------------------------------------------------------------------------------

def host_main() -> int:
    sys.path.insert(0, str(REPO / "tests" / "vm"))
    import vm_tier
    import vmlib

    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("build_dir", type=Path)
    ap.add_argument("--kernel", default="6.1", choices=[k.label for k in vm_tier.KERNELS])
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--seconds", type=int, default=4, help="per flood")
    ap.add_argument("--payload", type=int, default=64)
    ap.add_argument("--verbose", "-v", action="store_true", help="echo the guest console")
    ap.add_argument("--hucprof", type=Path,
                    help="another hucprof binary to measure (A/B against another build)")
    ap.add_argument("--icount", action="store_true",
                    help="one vCPU whose clock counts instructions (-icount shift=1,sleep=off): "
                         "per-program ns become instruction counts, steady under host load")
    a = ap.parse_args()

    build = a.build_dir.resolve()
    cache = build / "vm-cache"
    tools = {"hucprof": (a.hucprof or build / "daemon" / "hucprof").resolve(),
             "flood": build / "tests" / "tools" / "huc_udp_flood"}
    for p in tools.values():
        if not p.exists():
            print(f"{p} not built", file=sys.stderr)
            return 1
    try:
        vmlib.preflight()
        k, initrd = vm_tier.boot_files(a.kernel, cache)
    except vmlib.Skip as e:
        print(f"SKIP: {e}")
        return vmlib.SKIP

    plan = {"hucprof": str(tools["hucprof"]), "flood": str(tools["flood"]),
            "rounds": a.rounds, "seconds": a.seconds, "payload": a.payload}
    per_flood = a.seconds + 2
    # The two bpf_stats runs at the end, and every round's variants each after a baseline; one
    # instruction-counted vCPU runs several times slower than two free-running ones.
    timeout = 120 + (a.rounds * len(VARIANTS) + 2) * (2 * per_flood + 30)
    timeout *= 4 if a.icount else 1
    t0 = time.monotonic()
    res = vmlib.run_vm(k, initrd, Path(__file__), build / "vm-runs" / f"bench-overhead-{a.kernel}",
                       env={"HUCVM_BENCH_PLAN": json.dumps(plan)}, timeout_s=timeout,
                       echo_console=a.verbose, cpus=1 if a.icount else 2,
                       qemu_args=["-icount", "shift=1,sleep=off"] if a.icount else [])
    mfile = res.file("measurements.json")
    if res.guest_rc != 0 or not mfile.exists():
        print(vmlib.format_console(res, 80), file=sys.stderr)
        print(f"FAIL: guest exit {res.guest_rc}")
        return 1
    ms = json.loads(mfile.read_text())

    rows = []
    for variant in VARIANTS:
        ratios, rates, cpu, counted = [], [], [], []
        walks: dict[str, float] = {}
        for rnd in range(a.rounds):
            var = [m for m in ms if m["variant"] == variant and m["round"] == rnd]
            if not var:
                continue
            # The baseline measured right before this variant in this round.
            idx = ms.index(var[0])
            before = [m for m in ms[:idx] if m["variant"] == "none"][-1]
            ratios.append(before["received"] / max(var[0]["received"], 1))
            rates.append(var[0]["received"] / a.seconds)
            if "daemon_cpu_s" in var[0]:
                cpu.append(var[0]["daemon_cpu_s"] / a.seconds)
                counted.append(var[0].get("checks_counted", 0))
                for method, n in var[0].get("helper_calls", {}).items():
                    walks[method] = walks.get(method, 0) + n
        rows.append((variant, statistics.median(ratios) if ratios else float("nan"), ratios,
                     statistics.median(rates) if rates else 0, cpu, counted, walks))
    base_rates = [m["received"] / a.seconds for m in ms if m["variant"] == "none"]

    print(f"\n== probe overhead on a UDP flood, kernel {k.release} (QEMU "
          f"{res.accel.upper()}), {a.rounds} rounds x {a.seconds} s, "
          f"payload {a.payload} B, wall {time.monotonic() - t0:.0f} s")
    if base_rates:  # --rounds 0: only the bpf_stats runs
        print(f"   none       {statistics.median(base_rates):10.0f} datagrams/s received (median "
              f"of {len(base_rates)} baseline runs: {', '.join(f'{r:.0f}' for r in base_rates)})")
    for variant, ratio, ratios, rate, cpu, counted, walks in rows:
        extra = ""
        if cpu:
            extra = (f"; daemon CPU {100 * statistics.median(cpu):.1f}% of a core; "
                     f"udp_recvmsg checks counted {', '.join(f'{c:.0f}' for c in counted)}; "
                     "helper-called checks by method: "
                     + (", ".join(f"{m} {n:.0f}" for m, n in sorted(walks.items())) or "n/a"))
        print(f"   {variant:9}  {rate:10.0f} datagrams/s   slowdown x{ratio:.2f} "
              f"(per round: {', '.join(f'{r:.2f}' for r in ratios)}){extra}")
    print("   slowdown = baseline received / received with the variant, baseline measured right "
          "before each variant run")
    for m in ms:
        if "progs" not in m:
            continue
        print(f"   {m['variant']}: {m['received'] / a.seconds:.0f} datagrams/s received with "
              "kernel.bpf_stats_enabled=1; per BPF program: runs per received datagram, mean ns "
              "per run (TCG)")
        for name, (cnt, ns) in sorted(m["progs"].items(), key=lambda kv: -kv[1][1]):
            if cnt:
                print(f"      {name:34} {cnt / max(m['received'], 1):6.2f} runs/datagram  "
                      f"{ns / cnt:8.0f} ns/run  {ns / 1e9 / a.seconds * 100:5.1f}% of a CPU")
    (res.results_dir / "summary.json").write_text(json.dumps(
        {"kernel": k.release, "rows": [{"variant": r[0], "slowdown_median": r[1],
                                         "slowdowns": r[2], "rate_median": r[3]} for r in rows],
         "baseline_rates": base_rates}, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(guest_main() if "HUCVM_BENCH_PLAN" in os.environ and "HUCVM_RESULTS" in os.environ
             else host_main())
