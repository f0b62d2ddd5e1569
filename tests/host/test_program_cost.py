#!/usr/bin/env python3
"""Host tier: hucprof_bpf_program_runs_total / _run_seconds_total against bpftool.

With kernel.bpf_stats_enabled=1 the sampler program's run count and run time served on /metrics
must lie between what `bpftool prog show` reported for the same program (found through the
daemon's own descriptors in /proc/PID/fdinfo) before the last drain and right after the scrape.
With 0, hucprof_bpf_stats_enabled is 0 and the per-program families have no series. The sysctl is
put back as it was found; a change by someone else meanwhile is detected and named."""

import json
import os
import subprocess
import sys
import time
import unittest

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "lib"))
import hucprof_testlib as t  # noqa: E402

ARGS = None
SYSCTL = t.BPF_STATS_SYSCTL
INTERVAL_S = 1.0


def bpftool_programs(ids):
    """name -> (run_cnt, run_time_ns) from bpftool for the given program ids."""
    out = {}
    for prog_id in ids:
        info = json.loads(subprocess.run(["bpftool", "-j", "prog", "show", "id", str(prog_id)],
                                         check=True, capture_output=True, text=True).stdout)
        out[info["name"]] = (info.get("run_cnt", 0), info.get("run_time_ns", 0))
    return out


class ProgramCostTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.original = t.read_bpf_stats()
        cls.daemon = t.Daemon.started(ARGS.hucprof, ["--mode", "sample", "--interval", "1s",
                                                     "--sample-frequency", "499"],
                                      os.path.join(ARGS.workdir, "program_cost.log"))

    @classmethod
    def tearDownClass(cls):
        t.write_bpf_stats(cls.original)
        cls.daemon.stop()

    def scrape_with(self, value):
        """Sets the sysctl, lets two drains pass, and returns (bpftool before, metrics, bpftool
        after): the last drain before the scrape lies between the two bpftool reads."""
        t.write_bpf_stats(value)
        time.sleep(1.5 * INTERVAL_S)
        ids = t.held_bpf_ids(self.daemon.proc.pid, "prog")
        before = bpftool_programs(ids)
        time.sleep(2.5 * INTERVAL_S)
        metrics = t.parse_metrics(self.daemon.scrape())
        after = bpftool_programs(ids)
        if t.read_bpf_stats() != value:
            self.fail("kernel.bpf_stats_enabled was changed by another process during the test "
                      "(set %s, now %s)" % (value, t.read_bpf_stats()))
        return before, metrics, after

    def test_stats_on_counts_match_bpftool(self):
        before, metrics, after = self.scrape_with("1")
        self.assertEqual(t.total(metrics, "hucprof_bpf_stats_enabled"), 1.0)
        self.assertIn("huc_sample", after, "bpftool does not list the daemon's sampler program")
        runs = t.select(metrics, "hucprof_bpf_program_runs_total", program="huc_sample")
        seconds = t.select(metrics, "hucprof_bpf_program_run_seconds_total",
                           program="huc_sample")
        self.assertEqual(len(runs), 1, metrics)
        self.assertEqual(len(seconds), 1, metrics)
        served_runs, served_ns = runs[0][1], seconds[0][1] * 1e9
        (runs_before, ns_before), (runs_after, ns_after) = before["huc_sample"], after["huc_sample"]
        print("huc_sample run_cnt: bpftool %d <= /metrics %d <= bpftool %d; run_time_ns %d <= "
              "%.0f <= %d" % (runs_before, served_runs, runs_after, ns_before, served_ns,
                              ns_after), flush=True)
        self.assertGreater(runs_after, runs_before, "the sampler did not run while stats were on")
        self.assertLessEqual(runs_before, served_runs)
        self.assertLessEqual(served_runs, runs_after)
        # Seconds are printed as a double: allow its last digits.
        self.assertLessEqual(ns_before, served_ns * (1 + 1e-9) + 1)
        self.assertLessEqual(served_ns, ns_after * (1 + 1e-9) + 1)
        # Every program the daemon holds is served, and nothing else.
        served = {l["program"] for l, _ in t.select(metrics, "hucprof_bpf_program_runs_total")}
        self.assertEqual(served, set(after))

    def test_stats_off_says_so_without_series(self):
        _, metrics, _ = self.scrape_with("0")
        self.assertEqual(t.total(metrics, "hucprof_bpf_stats_enabled"), 0.0)
        self.assertEqual(t.select(metrics, "hucprof_bpf_program_runs_total"), [])
        self.assertEqual(t.select(metrics, "hucprof_bpf_program_run_seconds_total"), [])


def main():
    global ARGS
    ARGS, rest = t.script_args("hucprof")
    bpftool = subprocess.run(["sh", "-c", "command -v bpftool"], capture_output=True)
    return t.run_unittests(rest, ARGS.workdir, [
        (t.is_root(), "program cost: needs root (BPF, perf_event_open, the bpf_stats sysctl)"),
        (os.path.exists(SYSCTL), "program cost: this kernel has no %s" % SYSCTL),
        (bpftool.returncode == 0,
         "program cost: bpftool is not installed (scripts/install-deps.sh installs it)"),
    ])


if __name__ == "__main__":
    sys.exit(main())
