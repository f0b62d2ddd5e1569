#!/usr/bin/env python3
"""Overhead of `hucprof run --mode sample` on the workload it watches: a UDP loopback flood run
alternately without and with the daemon (A B A B ..., same machine, same minute), reported as
the ratio of datagrams received per second. Also reports the daemon's own CPU time and RSS.

  sudo bench/sampling_overhead.py --hucprof build/daemon/hucprof \
      --flood build/tests/tools/huc_udp_flood [--rounds 3] [--seconds 5] [--frequency 99]
"""
import argparse
import os
import re
import statistics
import subprocess
import sys

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "tests", "lib"))
import hucprof_testlib as t  # noqa: E402


def flood(binary, seconds):
    out = subprocess.run([binary, "--seconds", str(seconds), "--payload", "64"],
                         capture_output=True, text=True, check=True).stdout
    received = int(re.search(r"received (\d+)", out).group(1))
    return received / seconds


def proc_usage(pid):
    with open("/proc/%d/stat" % pid) as f:
        fields = f.read().rsplit(")", 1)[1].split()
    ticks = os.sysconf("SC_CLK_TCK")
    cpu = (int(fields[11]) + int(fields[12])) / ticks
    with open("/proc/%d/status" % pid) as f:
        rss = int(re.search(r"VmRSS:\s+(\d+)", f.read()).group(1))
    return cpu, rss


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--hucprof", required=True)
    p.add_argument("--flood", required=True)
    p.add_argument("--rounds", type=int, default=3)
    p.add_argument("--seconds", type=float, default=5)
    p.add_argument("--frequency", type=int, default=99)
    a = p.parse_args()
    base, watched = [], []
    cpu = rss = 0
    for r in range(a.rounds):
        base.append(flood(a.flood, a.seconds))
        with t.running_daemon(a.hucprof, ["--mode", "sample", "--interval", "1s",
                                          "--sample-frequency", str(a.frequency)],
                              "/tmp/hucprof_bench.log") as d:
            c0, _ = proc_usage(d.proc.pid)
            watched.append(flood(a.flood, a.seconds))
            c1, rss = proc_usage(d.proc.pid)
            cpu += c1 - c0
        print("round %d: without %.0f/s, with %.0f/s" % (r + 1, base[-1], watched[-1]))
    ratio = statistics.median(w / b for w, b in zip(watched, base))
    print("median throughput with hucprof sampling at %d Hz / without: %.3f" % (a.frequency, ratio))
    print("daemon CPU during floods: %.3f s over %.0f s (%.2f%% of one core); RSS %d KiB"
          % (cpu, a.rounds * a.seconds, 100 * cpu / (a.rounds * a.seconds), rss))


if __name__ == "__main__":
    main()
