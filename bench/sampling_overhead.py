#!/usr/bin/env python3
"""Overhead of `hucprof run --mode sample` on the workload it watches: a UDP loopback flood run
alternately without and with the daemon (A B A B ..., same machine, same minute), reported as
the ratio of datagrams received per second. Also reports the daemon's own CPU time and RSS, and
what its sampler program costs per run (kernel.bpf_stats_enabled=1 for the daemon's runs, put
back after). --baseline OTHER_BINARY runs another build the same way in every round (A B C A B
C ...), e.g. the build before a change to the sampler.

  sudo bench/sampling_overhead.py --hucprof build/daemon/hucprof \
      --flood build/tests/tools/huc_udp_flood [--rounds 3] [--seconds 5] [--frequency 99] \
      [--baseline OTHER_BINARY]
"""
import argparse
import os
import re
import statistics
import subprocess
import sys
import time

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


class BpfStats:
    """kernel.bpf_stats_enabled=1 while in use, then whatever it was."""

    PATH = "/proc/sys/kernel/bpf_stats_enabled"

    def __enter__(self):
        with open(self.PATH) as f:
            self.was = f.read().strip()
        with open(self.PATH, "w") as f:
            f.write("1")
        return self

    def __exit__(self, *exc):
        with open(self.PATH, "w") as f:
            f.write(self.was)


def sampler_ns_per_run(daemon):
    """huc_sample's run time per run so far, from the daemon's own bpf_stats families."""
    m = t.parse_metrics(daemon.scrape())
    runs = t.total(m, "hucprof_bpf_program_runs_total", program="huc_sample")
    seconds = t.total(m, "hucprof_bpf_program_run_seconds_total", program="huc_sample")
    return runs, seconds * 1e9


def watched_flood(binary, a):
    """The flood under one daemon: datagrams/s, the daemon's CPU, RSS, sampler runs and ns."""
    with t.running_daemon(binary, ["--mode", "sample", "--interval", "1s",
                                   "--sample-frequency", str(a.frequency)],
                          "/tmp/hucprof_bench.log") as d:
        c0, _ = proc_usage(d.proc.pid)
        r0, ns0 = sampler_ns_per_run(d)
        rate = flood(a.flood, a.seconds)
        c1, rss = proc_usage(d.proc.pid)
        time.sleep(1.5)  # a drain (--interval 1s) later, /metrics has the runs of the flood
        r1, ns1 = sampler_ns_per_run(d)
    return rate, c1 - c0, rss, r1 - r0, ns1 - ns0


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--hucprof", required=True)
    p.add_argument("--flood", required=True)
    p.add_argument("--rounds", type=int, default=3)
    p.add_argument("--seconds", type=int, default=5)
    p.add_argument("--frequency", type=int, default=99)
    p.add_argument("--baseline", help="another hucprof build, run the same way in every round")
    a = p.parse_args()
    builds = {"hucprof": a.hucprof}
    if a.baseline:
        builds["baseline"] = a.baseline
    base = []
    runs = {name: [] for name in builds}
    with BpfStats():
        for r in range(a.rounds):
            base.append(flood(a.flood, a.seconds))
            line = "round %d: without %.0f/s" % (r + 1, base[-1])
            for name, binary in builds.items():
                result = watched_flood(binary, a)
                runs[name].append(result)
                ns = result[4] / result[3] if result[3] else float("nan")
                line += ", %s %.0f/s (sampler %.0f ns/run)" % (name, result[0], ns)
            print(line, flush=True)
    for name, results in runs.items():
        ratio = statistics.median(w[0] / b for w, b in zip(results, base))
        cpu = sum(w[1] for w in results)
        ns = statistics.median(w[4] / w[3] for w in results if w[3])
        print("%s: median throughput with sampling at %d Hz / without: %.3f; sampler %.0f ns per "
              "run (median of rounds, bpf_stats); daemon CPU %.3f s over %.0f s (%.2f%% of one "
              "core); RSS %d KiB" % (name, a.frequency, ratio, ns, cpu, a.rounds * a.seconds,
                                     100 * cpu / (a.rounds * a.seconds), results[-1][2]))


if __name__ == "__main__":
    main()
