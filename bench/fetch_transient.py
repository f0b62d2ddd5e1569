#!/usr/bin/env python3
"""What one fetch of the since-start profile or of the web view costs the daemon's heap while it
is served (issue 40). The daemon samples this host under heaptrack (999 Hz, `--interval 1s`)
while workloads churn as in workload_churn_soak.py: a new cgroup every round, each running a
1-second UDP flood and a 1-second walk of /usr, then removed. After the warm-up (the 5-minute
prediction window filling) and a quiet phase (no request but /-/ready), the profile
(/debug/pprof/usercopy) is fetched `--fetches` times, then the page (/) as often, one every
`--every` seconds. heaptrack's record of the heap over time (heaptrack_print --print-massif, a
point every 10 ms or so) gives each phase's largest heap; a fetch's transient is that minus the
quiet phase's largest. Compare builds with the same flags, one after the other or side by side.

  sudo bench/fetch_transient.py --hucprof build/daemon/hucprof \\
      --flood build/tests/tools/huc_udp_flood [--warm-up 300] [--fetches 10] [--every 3]
"""
import argparse
import glob
import os
import re
import shlex
import signal
import subprocess
import sys
import tempfile
import threading
import time
import urllib.request

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "tests", "lib"))
import hucprof_testlib as t  # noqa: E402
from workload_churn_soak import churn_round, daemon_pid, wrapped_daemon  # noqa: E402


class Churn(threading.Thread):
    """A new cgroup every round running `flood` and a walk of /usr for a second, until stopped."""

    def __init__(self, flood):
        super().__init__(daemon=True)
        self.flood, self.done, self.rounds = flood, threading.Event(), 0

    def run(self):
        while not self.done.is_set():
            cgroup = t.Cgroup("hucprof-fetch-%d-%d" % (os.getpid(), self.rounds))
            try:
                churn_round(cgroup, self.flood)
            finally:
                cgroup.close()
            self.rounds += 1


def massif_points(path):
    """(seconds since start, heap bytes) of every snapshot heaptrack_print wrote."""
    points, at = [], None
    with open(path) as f:
        for line in f:
            if line.startswith("time="):
                at = float(line.split("=", 1)[1])
            elif line.startswith("mem_heap_B=") and at is not None:
                points.append((at, int(line.split("=", 1)[1])))
    return points


def largest(points, start, end):
    inside = [b for (s, b) in points if start <= s <= end]
    return max(inside) if inside else 0


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--hucprof", required=True)
    p.add_argument("--flood", required=True, help="huc_udp_flood")
    p.add_argument("--warm-up", type=float, default=300, help="seconds of load before the quiet "
                   "phase")
    p.add_argument("--quiet", type=float, default=30, help="seconds without requests")
    p.add_argument("--fetches", type=int, default=10)
    p.add_argument("--every", type=float, default=3)
    p.add_argument("--frequency", type=int, default=999)
    p.add_argument("--keep", help="keep heaptrack's file here (a prefix)")
    a = p.parse_args()
    if not t.is_root():
        print("SKIP: needs root (perf events, BPF)")
        return 77
    if t.unified_cgroup_root() is None:
        print("SKIP: no cgroup v2 hierarchy on this host")
        return 77
    if subprocess.run(["which", "heaptrack"], capture_output=True).returncode != 0:
        print("SKIP: heaptrack is not installed")
        return 77

    tmp = tempfile.mkdtemp(prefix="hucprof-fetch-transient-")
    prefix = a.keep or os.path.join(tmp, "heap")
    wrapped = wrapped_daemon(tmp, "heaptrack -o %s" % shlex.quote(prefix), a.hucprof)
    # Under heaptrack a thread of its own keeps the daemon from dropping capabilities.
    args = ["--mode", "sample", "--sample-frequency", str(a.frequency), "--interval", "1s",
            "--capabilities.keep=all"]
    started = time.monotonic()
    d = t.Daemon.started(wrapped, args, os.path.join(tmp, "hucprof.log"), timeout=120)
    # Only once the daemon runs: were it to fail to start, no churn would be left behind.
    churn = Churn(a.flood)
    phases, sizes = {}, {}
    try:
        churn.start()
        time.sleep(a.warm_up)
        mark = time.monotonic()
        time.sleep(a.quiet)
        phases["quiet"] = (mark - started, time.monotonic() - started)
        for name, path in (("profile", "/debug/pprof/usercopy"), ("page", "/")):
            mark = time.monotonic()
            for _ in range(a.fetches):
                with urllib.request.urlopen(d.url(path), timeout=60) as r:
                    sizes[name] = len(r.read())
                time.sleep(a.every)
            phases[name] = (mark - started, time.monotonic() - started)
    finally:
        try:
            os.kill(daemon_pid(d.proc.pid, a.hucprof), signal.SIGTERM)  # heaptrack passes none on
            d.stop(timeout=120)
        finally:  # the round under way ends and its cgroup goes, whatever happened above
            churn.done.set()
            if churn.ident is not None:
                churn.join()

    files = glob.glob(prefix + "*.zst") + glob.glob(prefix + "*.gz")
    if not files:
        print("no heaptrack file under %s*" % prefix)
        return 1
    massif = os.path.join(tmp, "massif.out")
    subprocess.run(["heaptrack_print", "-f", files[0], "-M", massif, "--massif-detailed-freq",
                    "0", "-p", "0", "-a", "0", "-T", "0", "-l", "0"],
                   stdout=subprocess.DEVNULL, check=True)
    peak = subprocess.run(["heaptrack_print", "-f", files[0], "-p", "0", "-a", "0", "-T", "0",
                           "-l", "0"], capture_output=True, text=True).stdout
    points = massif_points(massif)
    # heaptrack's time runs from when it started the daemon, a little after `started`: the
    # phases are wide enough (seconds) that this does not matter.
    quiet = largest(points, *phases["quiet"])
    print("heaptrack file: %s; %d workloads" % (files[0], churn.rounds))
    print("quiet phase: largest heap %.1f MiB" % (quiet / 2**20))
    for name in ("profile", "page"):
        top = largest(points, *phases[name])
        print("%-7s %d fetches (%d bytes each): largest heap %.1f MiB, transient %+.1f MiB"
              % (name, a.fetches, sizes[name], top / 2**20, (top - quiet) / 2**20))
    for line in peak.splitlines():
        if re.search(r"peak heap memory consumption|total memory leaked", line):
            print(line.strip())
    return 0


if __name__ == "__main__":
    sys.exit(main())
