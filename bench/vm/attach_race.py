#!/usr/bin/env python3
"""Does attaching hucprof's fentry programs crash a busy kernel, and when? A reproducer for the
6.12 Oops seen once in the VM tier (NULL RIP entered from __check_object_size's call of
__virt_addr_valid, right while `hucprof run --mode probe --probe.attach fentry` attached):

  bench/vm/attach_race.py BUILD_DIR [--kernel 6.12] [--cycles 20] [--variants V,V,...] [-v]

Each variant is booted (again, until --cycles are done: the guest panics at the first Oops)
with a TCP and a UDP loopback load running all the time, and repeats: start hucprof in probe
mode with fentry, wait until it has drained once (attached), stop it. A variant is REF-TCG:

  REF  none     nothing else uses the check functions' ftrace sites
       defined  the VM tier's reference kprobe events exist but are disabled (what the tier
                had when the Oops happened: its first session starts before ref_start)
       armed    the reference is armed (hist triggers + enabled) for the whole boot: every
                fentry attach shares its site with a kprobe
  TCG  mttcg    -accel tcg (one host thread per vCPU, the tier's default)
       single   -accel tcg,thread=single (one host thread runs both vCPUs in turn)

A variant named narrow-REF-TCG instead attaches and detaches a do-nothing fentry program on
__virt_addr_valid alone (`fentry_cycle`, no hucprof), --cycles x 10 times.

Prints per variant: cycles done, boots, Oopses and lockups, with each one's first lines. The
consoles stay in BUILD_DIR/vm-runs/attach-race/. Not part of ctest (it is an experiment; its
counts are in tests/vm/README.md). Root needed only to download a kernel package the first time.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import socket
import subprocess
import sys
import time
from pathlib import Path

sys.dont_write_bytecode = True
HERE = Path(__file__).resolve().parent
REPO = HERE.parents[1]
REFS = ("none", "defined", "armed")
TCGS = {"mttcg": "", "single": "thread=single"}
DEFAULT_VARIANTS = "none-mttcg,armed-mttcg,defined-mttcg,none-single,armed-single"
HUCPROF_ARGS = ["--mode", "probe", "--probe.attach", "fentry", "--interval", "500ms",
                "--top-k", "1000"]


# ---------------------------------------------------------------------------------------------
# Guest side
# ---------------------------------------------------------------------------------------------

def load_tcp() -> None:
    """Loopback TCP: sendmsg copies from user into page frags (__check_object_size ->
    check_heap_object -> __virt_addr_valid), recv copies to user."""
    srv = socket.socket()
    srv.bind(("127.0.0.1", 0))
    srv.listen(1)
    cli = socket.create_connection(srv.getsockname())
    peer, _ = srv.accept()
    sizes = [1, 100, 1500, 4096, 9000, 30000]
    i = 0
    while True:
        data = b"x" * sizes[i % len(sizes)]
        cli.sendall(data)
        got = 0
        while got < len(data):
            got += len(peer.recv(65536))
        i += 1


def load_udp() -> None:
    a = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    b = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    b.bind(("127.0.0.1", 0))
    while True:
        a.sendto(b"y" * 64, b.getsockname())
        b.recv(2048)


def guest_main() -> int:
    sys.path.insert(0, str(REPO / "tests" / "vm" / "guest"))
    import guestlib

    results = Path(os.environ["HUCVM_RESULTS"])
    plan = json.loads(os.environ["HUCVM_RACE_PLAN"])

    def say(what: str) -> None:
        print(f"HUCVM-RACE {guestlib.uptime():.2f} {what}", flush=True)

    ref = None
    if plan["ref"] != "none":
        ref = guestlib.RefProbe(results)
        ref.call("ref_init")
        ref.call("ref_usercopy_probes")
        ref.call("ref_start" if plan["ref"] == "armed" else "ref_register")
    try:
        armed = Path("/sys/kernel/debug/kprobes/list").read_text().replace("\n", "; ")
    except OSError as e:
        armed = str(e)
    say(f"reference {plan['ref']}; kprobes/list: {armed}")
    loads = [subprocess.Popen([sys.executable, __file__, "load", kind])
             for kind in ("tcp", "udp")]
    try:
        time.sleep(2)
        for i in range(plan["first"], plan["first"] + plan["cycles"]):
            if plan["narrow"]:
                say(f"cycle {i} start fentry_cycle")
                r = subprocess.run([plan["fentry_cycle"], "__virt_addr_valid", "10"],
                                   capture_output=True, text=True, timeout=600)
                say(f"cycle {i} stopped rc={r.returncode} {r.stdout.strip()} {r.stderr.strip()}")
                continue
            say(f"cycle {i} start hucprof")
            run = guestlib.HucprofRun(plan["hucprof"], HUCPROF_ARGS,
                                      results / f"daemon-{i}.log")
            try:
                run.wait_ready(timeout=180)
                say(f"cycle {i} ready")
            except Exception as e:  # noqa: BLE001 - recorded, the next cycle still runs
                say(f"cycle {i} not ready: {str(e).splitlines()[0]}")
            say(f"cycle {i} stopped rc={run.stop()}")
    finally:
        for p in loads:
            p.kill()
        if ref is not None:
            ref.close()
    return 0


# ---------------------------------------------------------------------------------------------
# Host side
# ---------------------------------------------------------------------------------------------

DEATH = re.compile(r"\] (Oops: .*|BUG: soft lockup.*|rcu: INFO: rcu_\w+ detected stalls.*)")


def deaths(console: str) -> list[str]:
    """One line per kernel death on the console (Oops, soft lockup, RCU stall): the report, the
    line before an Oops (what faulted), the RIP and the first frame of the call trace."""
    out = []
    lines = console.splitlines()
    for n, line in enumerate(lines):
        m = DEATH.search(line)
        if not m:
            continue
        what = m.group(1)
        if what.startswith("Oops:"):
            cause = [c.split("] ", 1)[-1] for c in lines[max(0, n - 4):n]
                     if re.search(r"BUG: |general protection", c)]
            what = (cause[0] + " / " if cause else "") + what
        ctx = lines[n:n + 40]
        rip = next((c.split("] ", 1)[-1] for c in ctx if "RIP: 0010:" in c), "")
        trace = next((i for i, c in enumerate(ctx) if "Call Trace:" in c), len(ctx))
        frame = next((c.split("] ", 1)[-1].strip() for c in ctx[trace:] if "+0x" in c), "")
        out.append(f"{what} | {rip} | top frame {frame}")
    return out


def host_main() -> int:
    sys.path.insert(0, str(REPO / "tests" / "vm"))
    os.environ.setdefault("HUCVM_ACCEL", "tcg")  # thread=single is a TCG property
    import tier_kernels
    import qemu_run
    import vmlib

    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("build_dir", type=Path)
    ap.add_argument("--kernel", default="6.12", choices=[k.label for k in tier_kernels.KERNELS])
    ap.add_argument("--cycles", type=int, default=20)
    ap.add_argument("--variants", default=DEFAULT_VARIANTS)
    ap.add_argument("--max-boots", type=int, default=4, help="per variant")
    ap.add_argument("--verbose", "-v", action="store_true")
    a = ap.parse_args()

    build = a.build_dir.resolve()
    cache = build / "vm-cache"
    hucprof = build / "daemon" / "hucprof"
    variants = []
    for v in a.variants.split(","):
        parts = v.split("-")
        narrow = parts[0] == "narrow"
        parts = parts[1:] if narrow else parts
        if len(parts) != 2 or parts[0] not in REFS or parts[1] not in TCGS:
            print(f"bad variant {v!r}: [narrow-]{{{','.join(REFS)}}}-{{{','.join(TCGS)}}}",
                  file=sys.stderr)
            return 2
        variants.append((v, narrow, parts[0], parts[1]))
    try:
        qemu_run.preflight()
        k, initrd = tier_kernels.boot_files(a.kernel, cache)
        cycler = vmlib.compile_c(HERE / "fentry_cycle.c", cache / "bin" / "fentry_cycle",
                                 libs=("-lbpf",))
    except vmlib.Skip as e:
        print(f"SKIP: {e}")
        return vmlib.SKIP

    work = build / "vm-runs" / "attach-race"
    work.mkdir(parents=True, exist_ok=True)
    summary = {}
    state = {v[0]: {"done": 0, "boots": 0, "deaths": [], "not_ready": 0, "wall": 0.0}
             for v in variants}
    # Round robin, one boot at a time: host load drifts, so every variant sees the same drift.
    while True:
        todo = [v for v in variants if state[v[0]]["done"] < a.cycles
                and state[v[0]]["boots"] < a.max_boots and not state[v[0]].get("stalled")]
        if not todo:
            break
        for name, narrow, refmode, tcg in todo:
            st = state[name]
            if st["done"] >= a.cycles or st["boots"] >= a.max_boots:
                continue
            left = a.cycles - st["done"]
            plan = {"hucprof": str(hucprof), "ref": refmode, "narrow": narrow,
                    "fentry_cycle": str(cycler), "first": st["done"], "cycles": left}
            run_dir = work / f"{name}-boot{st['boots']}"
            per_cycle = 90 if tcg == "single" else 60
            t0 = time.monotonic()
            try:
                qemu_run._run_vm_once(k, initrd, Path(__file__), run_dir,
                                   env={"HUCVM_RACE_PLAN": json.dumps(plan)},
                                   extra_cmdline="oops=panic", tcg_props=TCGS[tcg],
                                   timeout_s=180 + left * per_cycle, echo_console=a.verbose)
            except vmlib.VmFailure as e:
                vmlib.log(f"{name}: {str(e).splitlines()[0]}")
            st["wall"] += time.monotonic() - t0
            st["boots"] += 1
            console = (work / f"{run_dir.name}.console.log").read_text(errors="replace")
            stopped = len(re.findall(r"HUCVM-RACE \S+ cycle \d+ stopped", console))
            st["not_ready"] += len(re.findall(r"HUCVM-RACE \S+ cycle \d+ not ready", console))
            died = deaths(console)
            # A boot that died counts the cycle it died in as done (its outcome is the death).
            st["done"] += stopped + (1 if died else 0)
            for d in died[:1]:
                st["deaths"].append(f"boot {st['boots'] - 1} cycle {st['done'] - 1}: {d}")
            if not died and stopped < left:
                # Hung or broke without a kernel report: counted as a death of its own kind,
                # and the variant is not booted again (its console says why).
                st["deaths"].append(f"boot {st['boots'] - 1}: ended after {stopped} of {left} "
                                    "cycles without a kernel report (see its console)")
                st["stalled"] = True
            vmlib.log(f"{name}: boot {st['boots'] - 1}: {stopped} cycles, "
                      f"{'died: ' + died[0] if died else 'no kernel death'}")
            summary[name] = st
            (work / "summary.json").write_text(json.dumps(summary, indent=1))

    print(f"\n== fentry attach race, kernel {k.release}, {a.cycles} cycles per variant")
    print(f"   {'variant':22} {'cycles':>6} {'boots':>5} {'deaths':>6} {'not ready':>9} "
          f"{'wall s':>7}")
    for name, *_ in variants:
        st = state[name]
        print(f"   {name:22} {st['done']:6} {st['boots']:5} {len(st['deaths']):6} "
              f"{st['not_ready']:9} {st['wall']:7.0f}")
        for d in st["deaths"]:
            print(f"      {d}")
    return 0


if __name__ == "__main__":
    if len(sys.argv) == 3 and sys.argv[1] == "load":
        {"tcp": load_tcp, "udp": load_udp}[sys.argv[2]]()
    sys.exit(guest_main() if "HUCVM_RACE_PLAN" in os.environ and "HUCVM_RESULTS" in os.environ
             else host_main())
