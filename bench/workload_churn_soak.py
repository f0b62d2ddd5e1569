#!/usr/bin/env python3
"""Memory under workload churn: does the daemon's RSS stay flat on a node that starts a new
workload every second, and for months?

A new cgroup (below the unified root) every round, each running a UDP loopback flood and a
directory walk for about a second, then removed; meanwhile /metrics is scraped every second and
the since-start profile and the web view are fetched every 25 s, with sampling at 999 Hz and
`--interval 1s`: the request pattern of issue 40. `--one-cgroup` runs every round in the same
cgroup instead, which separates what grows with the number of workloads from what grows with
time. The daemon's RSS (VmRSS of /proc/PID/status) is printed every minute; at the end, its
least-squares slope after the warm-up, and the largest RSS seen.

  sudo bench/workload_churn_soak.py --hucprof build/daemon/hucprof \\
      --flood build/tests/tools/huc_udp_flood [--minutes 30] [--warm-up 5] [--one-cgroup]

`--wrap 'heaptrack -o /tmp/soak' --extra --capabilities.keep=all` runs the daemon under another
program (its RSS is then read from the hucprof process below it).
"""
import argparse
import os
import shlex
import signal
import sys
import tempfile
import threading
import time
import urllib.request

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "tests", "lib"))
import hucprof_testlib as t  # noqa: E402


def daemon_pid(top, binary):
    """The hucprof process: `top` itself, or (under --wrap) the descendant running `binary`."""
    want = os.path.realpath(binary)
    todo = [top]
    while todo:
        pid = todo.pop()
        try:
            if os.path.realpath("/proc/%d/exe" % pid) == want:
                return pid
            with open("/proc/%d/task/%d/children" % (pid, pid)) as f:
                todo += [int(c) for c in f.read().split()]
        except OSError:
            pass
    raise RuntimeError("no process below pid %d runs %s" % (top, want))


def wrapped_daemon(directory, wrap, hucprof):
    """A script in `directory` that runs `hucprof` with its arguments under the command line
    `wrap` (shell words, e.g. `heaptrack -o /tmp/soak`; quote what it holds with shlex.quote)."""
    path = os.path.join(directory, "wrapped")
    with open(path, "w") as f:
        f.write("#!/bin/sh\nexec %s %s \"$@\"\n" % (wrap, shlex.quote(hucprof)))
    os.chmod(path, 0o755)
    return path


def churn_round(cgroup, flood, walk="/usr"):
    """One round of churn in `cgroup`: a 1-second UDP loopback flood and a 1-second walk of
    `walk`, side by side; returns when both have ended."""
    work = [cgroup.run([flood, "--seconds", "1", "--payload", "64"], quiet=True),
            cgroup.run(["timeout", "1", "find", walk, "-xdev"], quiet=True)]
    for w in work:
        w.wait(timeout=120)


class Requests(threading.Thread):
    """GET `paths` every `every` seconds until stopped; counts failures."""

    def __init__(self, daemon, paths, every):
        super().__init__(daemon=True)
        self.d, self.paths, self.every = daemon, paths, every
        self.done = threading.Event()
        self.ok = self.failed = 0

    def run(self):
        while not self.done.wait(self.every):
            for path in self.paths:
                try:
                    with urllib.request.urlopen(self.d.url(path), timeout=60) as r:
                        r.read()
                    self.ok += 1
                except OSError:
                    self.failed += 1


def slope_per_minute(points):
    """Least squares (minutes, KiB) → KiB per minute."""
    n = len(points)
    if n < 2:
        return 0.0
    mx = sum(p[0] for p in points) / n
    my = sum(p[1] for p in points) / n
    sxx = sum((p[0] - mx) ** 2 for p in points)
    return sum((p[0] - mx) * (p[1] - my) for p in points) / sxx if sxx else 0.0


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--hucprof", required=True)
    p.add_argument("--flood", required=True, help="huc_udp_flood")
    p.add_argument("--minutes", type=float, default=30)
    p.add_argument("--warm-up", type=float, default=5, help="minutes left out of the slope")
    p.add_argument("--frequency", type=int, default=999)
    p.add_argument("--interval", default="1s")
    p.add_argument("--one-cgroup", action="store_true", help="every round in the same cgroup")
    p.add_argument("--walk", default="/usr", help="the directory tree each round walks")
    p.add_argument("--wrap", default="", help="a program to run the daemon under")
    p.add_argument("--extra", nargs=argparse.REMAINDER, default=[],
                   help="more `hucprof run` flags (under --wrap: --capabilities.keep=all, since "
                   "a wrapper's thread keeps the daemon from dropping them)")
    a = p.parse_args()
    if not t.is_root():
        print("SKIP: needs root (BPF, perf events, cgroups)")
        return 77
    if t.unified_cgroup_root() is None:
        print("SKIP: no cgroup v2 hierarchy on this host")
        return 77

    tmp = tempfile.mkdtemp(prefix="hucprof-churn-soak-")
    print("daemon log: %s" % os.path.join(tmp, "hucprof.log"), flush=True)
    binary = a.hucprof
    if a.wrap:
        binary = wrapped_daemon(tmp, a.wrap, a.hucprof)
    args = ["--mode", "sample", "--sample-frequency", str(a.frequency),
            "--interval", a.interval] + a.extra
    tag = "hucprof-soak-%d" % os.getpid()
    fixed = t.Cgroup(tag) if a.one_cgroup else None
    rows, rounds = [], 0
    d = t.Daemon.started(binary, args, os.path.join(tmp, "hucprof.log"), timeout=120)
    pid = d.proc.pid
    try:
        pid = daemon_pid(d.proc.pid, a.hucprof)
        scrapes = Requests(d, ["/metrics"], 1)
        pages = Requests(d, ["/debug/pprof/usercopy", "/"], 25)
        scrapes.start()
        pages.start()
        start = time.monotonic()
        next_row = start
        while time.monotonic() - start < a.minutes * 60:
            now = time.monotonic()
            if now >= next_row:
                rows.append(((now - start) / 60, t.vm_rss_kib(pid)))
                print("%5.1f min  RSS %6d KiB  %5d cgroups  %6d scrapes  %4d profiles+pages"
                      % (rows[-1][0], rows[-1][1], rounds, scrapes.ok, pages.ok), flush=True)
                next_row += 60
            cgroup = fixed or t.Cgroup("%s-%d" % (tag, rounds))
            try:
                churn_round(cgroup, a.flood, a.walk)
            finally:
                if not fixed:  # interrupted or not: no cgroup of the bench's is left behind
                    cgroup.close()
            rounds += 1
        rows.append(((time.monotonic() - start) / 60, t.vm_rss_kib(pid)))
        scrapes.done.set()
        pages.done.set()
        requests = (scrapes.ok, pages.ok, scrapes.failed + pages.failed)
    finally:
        if pid != d.proc.pid:  # a wrapper may not pass SIGTERM on
            os.kill(pid, signal.SIGTERM)
        d.stop(timeout=120)
        if fixed:
            fixed.close()
    after = [r for r in rows if r[0] >= a.warm_up]
    print("\n== %g min, %d Hz, --interval %s, %d rounds in %s" % (
        a.minutes, a.frequency, a.interval, rounds,
        "one cgroup" if a.one_cgroup else "%d cgroups (a new one each round)" % rounds))
    print("RSS at start %d KiB, after %g min of warm-up %d KiB, at the end %d KiB, largest "
          "%d KiB" % (rows[0][1], a.warm_up, after[0][1] if after else 0, rows[-1][1],
                      max(r[1] for r in rows)))
    print("slope after the warm-up: %.1f KiB a minute (least squares over %d points)"
          % (slope_per_minute(after), len(after)))
    print("requests: %d scrapes, %d profiles and pages, %d failed" % requests)
    return 0


if __name__ == "__main__":
    sys.exit(main())
