#!/usr/bin/env python3
"""The what-if bench's arithmetic (whatif_stats.py) on hand-made records: a bench whose verdicts
are computed wrong would validate nothing. No VM, stdlib only, < 1 s."""

import sys
import unittest
from pathlib import Path

sys.dont_write_bytecode = True
sys.path.insert(0, str(Path(__file__).resolve().parent))
import whatif_stats as ws  # noqa: E402


def timing(workload, wall_per_op, reps=(0, 1, 2), ops=1000):
    return [{"kind": "timing", "workload": workload, "rep": r, "ops": ops,
             "wall_ns": wall_per_op[r] * ops if isinstance(wall_per_op, list) else wall_per_op * ops,
             "cpu_ns": 0, "busy_ns": 0} for r in reps]


def session(kind, workload, in_checks, busy, gauge_share=None):
    rec = {"kind": kind, "workload": workload, "ops": 1, "wall_ns": 1,
           "counters": {"in_checks": in_checks, "busy": busy}}
    if gauge_share is not None:
        rec["gauge"] = {"share": gauge_share}
    return rec


class Measured(unittest.TestCase):
    def boots(self, on, off):
        return ([ws.Boot("6.1", i, "on", timing("udp", t)) for i, t in enumerate(on)]
                + [ws.Boot("6.1", i, "off", timing("udp", t)) for i, t in enumerate(off)])

    def test_speedup_per_pair_and_median(self):
        m = ws.measured(self.boots([105, 104, 106], [100, 100, 100]), "udp")
        self.assertEqual([round(s, 6) for s in m.speedups], [1.05, 1.04, 1.06])
        self.assertAlmostEqual(m.median, 1.05)

    def test_noise_band_from_boots_of_the_same_kind(self):
        # A/A: 105/104 and 104/106; B/B: 100/101, 101/100 -> largest deviation 1/101.
        m = ws.measured(self.boots([105, 104, 106], [100, 101, 100]), "udp")
        self.assertAlmostEqual(m.noise, max(abs(105 / 104 - 1), abs(104 / 106 - 1),
                                            abs(100 / 101 - 1), abs(101 / 100 - 1)))
        self.assertTrue(m.signal)

    def test_a_speedup_inside_the_noise_is_no_signal(self):
        m = ws.measured(self.boots([101, 99, 101], [100, 100, 98]), "udp")
        self.assertFalse(m.signal)
        self.assertEqual(ws.verdict(m, ws.predicted([], "udp", "sampling")), "in noise: no claim")

    def test_median_of_repetitions_within_a_boot(self):
        boots = [ws.Boot("6.1", 0, "on", timing("udp", [110, 105, 300])),
                 ws.Boot("6.1", 0, "off", timing("udp", [100, 100, 100]))]
        self.assertAlmostEqual(ws.measured(boots, "udp").speedups[0], 1.10)


class Predicted(unittest.TestCase):
    def test_pooled_is_sum_over_sum_and_off_boots_do_not_count(self):
        boots = [ws.Boot("6.1", 0, "on", [session("sampling", "udp", 30, 1000),
                                           session("sampling", "udp", 10, 3000)]),
                 ws.Boot("6.1", 1, "on", [session("sampling", "udp", 0, 1000)]),
                 ws.Boot("6.1", 1, "off", [session("sampling", "udp", 999, 1000)])]
        p = ws.predicted(boots, "udp", "sampling")
        self.assertAlmostEqual(p.share, 40 / 5000)
        self.assertAlmostEqual(p.speedup, 1 / (1 - 40 / 5000))
        self.assertEqual([round(s, 6) for s in p.per_boot], [round(1 / 0.99, 6), 1.0])
        self.assertEqual(p.sessions, 3)

    def test_gauge_gap(self):
        boots = [ws.Boot("6.1", 0, "on", [session("latency", "tcp", 1, 100, gauge_share=0.012)])]
        self.assertAlmostEqual(ws.predicted(boots, "tcp", "latency").gauge_gap, 0.002)

    def test_no_busy_time_no_prediction(self):
        boots = [ws.Boot("6.1", 0, "on", [session("sampling", "udp", 0, 0)])]
        self.assertIsNone(ws.predicted(boots, "udp", "sampling").speedup)


class GainError(unittest.TestCase):
    def test_error_is_on_the_gain_not_the_ratio(self):
        # 1.03 predicted for 1.04 measured: 1 % apart as ratios, -25 % as gains.
        self.assertAlmostEqual(ws.gain_error(1.03, 1.04), -0.25)

    def test_no_gain_measured_no_error(self):
        self.assertIsNone(ws.gain_error(1.01, 1.0))
        self.assertIsNone(ws.gain_error(None, 1.05))

    def test_verdicts(self):
        boots = [ws.Boot("6.1", i, r, timing("udp", t)) for i, (r, t) in
                 enumerate([("on", 110), ("off", 100), ("on", 110), ("off", 100)])]
        for b in boots:
            b.pair //= 2
        m = ws.measured(boots, "udp")
        good = ws.Predicted(0.085, 1 / 0.915, [], 1, 85, 1000, None)  # gain 9.3 % of 10 %
        bad = ws.Predicted(0.02, 1 / 0.98, [], 1, 20, 1000, None)
        self.assertEqual(ws.verdict(m, good), "within goal")
        self.assertEqual(ws.verdict(m, bad), "OFF")


if __name__ == "__main__":
    unittest.main()
