#!/usr/bin/env python3
"""Host tier, one number everywhere: a running daemon during a UDP flood, then, between two
drains, its /metrics, its web view, `hucprof report` on its profile since start, and Google's
pprof on the same file must all give the same share of busy CPU in the checks, over the same
window and the same samples, and the same 95 % interval: the report's Wilson's at design effect
1.5, computed here from the textbook formula; the web view's /metrics' bounds. The web view's
link to the profile of its window (named by its end) gives that window's samples.

The prediction window is longer than the run, so the window of /metrics and of the web view is
"since start", as the profile is. References: the counters /metrics exports (the share must be
their quotient), and Google's pprof's own arithmetic on the profile (`-raw` sums, `-top -focus`
percentage)."""

import html
import os
import re
import subprocess
import sys
import tempfile
import time
import unittest
import urllib.request

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "lib"))
import hucprof_testlib as t  # noqa: E402
import pprof_raw  # noqa: E402
from wilson_interval import wilson  # noqa: E402

ARGS = None
CHECKS = "^(__check_object_size|check_heap_object)"
# Decided: "S % of busy CPU is in the checks (95 % interval L-U %): k of n busy samples ... over W";
# collecting: "collecting: ...: k of n busy samples ... over W; 95 % interval L-U %, too wide ...".
HEADLINE = re.compile(r"(?:(?P<share>\d+\.\d\d) % of busy CPU is in the checks \(95 % interval "
                      r"(?P<lower>\d+\.\d\d)-(?P<upper>\d+\.\d\d) %\)|(?P<collecting>collecting: "
                      r"[^:]*)): (?P<k>[\d,]+) of (?P<n>[\d,]+) busy samples \(kernel \+ user, idle "
                      r"left out\) (?P<window>over [^;<\n]*)(?:; 95 % interval (?P<clower>\d+\.\d\d)-"
                      r"(?P<cupper>\d+\.\d\d) %, too wide to decide on)?")
def interval_of(m):
    """The printed interval (percent) of a HEADLINE match, decided or collecting."""
    if m.group("share"):
        return float(m.group("lower")), float(m.group("upper"))
    return float(m.group("clower")), float(m.group("cupper"))


def count(text):
    return int(text.replace(",", ""))


def tolerance(printed):
    """Half a unit of the last digit a percentage was printed with."""
    decimals = len(printed.split(".")[1]) if "." in printed else 0
    return 0.5 * 10 ** -decimals + 1e-9


class OneNumberInEveryView(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.dir = tempfile.mkdtemp(prefix="huc-one-", dir=ARGS.workdir)
        cls.daemon = t.Daemon.started(
            ARGS.hucprof, ["--mode", "sample", "--interval", "3s", "--sample-frequency", "499",
                           "--prediction.window", "1h"],
            os.path.join(cls.dir, "daemon.log"))
        try:
            subprocess.run([ARGS.flood, "--seconds", "8", "--payload", "64"], check=True,
                           stdout=subprocess.DEVNULL, timeout=60)
            cls.views = cls.between_two_drains()
        finally:
            cls.daemon.stop()

    @classmethod
    def between_two_drains(cls):
        """/metrics, /, the profile and /metrics again, retried until no drain came between."""
        profile = os.path.join(cls.dir, "since_start.pb.gz")
        window_profile = os.path.join(cls.dir, "window.pb.gz")
        for _ in range(10):
            before = t.parse_metrics(cls.daemon.scrape())
            _, page = t.http_get(cls.daemon.url("/"), timeout=30)
            with urllib.request.urlopen(cls.daemon.url("/debug/pprof/usercopy"), timeout=30) as r:
                with open(profile, "wb") as f:
                    f.write(r.read())
            # The page's own link to the profile of its window (relative to "/").
            link = re.search(r'<a href="([^"]*)" id="window-profile">', page)
            if not link:
                raise AssertionError("no window-profile link on the page: " + page[-3000:])
            with urllib.request.urlopen(cls.daemon.url("/" + html.unescape(link.group(1))),
                                        timeout=30) as r:
                with open(window_profile, "wb") as f:
                    f.write(r.read())
            after = t.parse_metrics(cls.daemon.scrape())
            drains = t.total(before, "hucprof_drains_total")
            if drains == t.total(after, "hucprof_drains_total") and drains >= 4:
                return {"metrics": before, "page": page, "profile": profile,
                        "window_profile": window_profile}
            time.sleep(0.5)
        raise AssertionError("a drain came between the views ten times over")

    def metrics_share(self):
        m = self.views["metrics"]
        # The window's counts are exported whether or not the share meets the verdict rule yet;
        # once it does, the headline gauge is their quotient.
        window_checks = t.select(m, "usercopy_prediction_check_samples", estimator="sampling")
        window_busy = t.select(m, "usercopy_prediction_busy_samples", estimator="sampling")
        self.assertEqual((len(window_checks), len(window_busy)), (1, 1),
                         "no sampling prediction exported")
        share = window_checks[0][1] / window_busy[0][1]
        ratio = t.select(m, "usercopy_checks_busy_cpu_ratio", estimator="sampling")
        if ratio:
            self.assertAlmostEqual(ratio[0][1], share, places=12)
        checks = t.total(m, "usercopy_cpu_samples_total")
        busy = (t.total(m, "usercopy_sampled_cpu_samples_total", context="kernel")
                + t.total(m, "usercopy_sampled_cpu_samples_total", context="user"))
        return share, int(checks), int(busy)

    def test_metrics_share_is_its_counters_quotient_since_start(self):
        share, checks, busy = self.metrics_share()
        self.assertGreater(checks, 0, "the flood must have been sampled in the checks")
        self.assertAlmostEqual(share, checks / busy, places=12)

    def test_web_view_headline_is_the_metrics_share(self):
        share, checks, busy = self.metrics_share()
        page = self.views["page"]
        parts = [re.search(r'id="%s">([^<]*)</p>' % id, page) for id in ("headline",
                                                                          "headline-detail")]
        self.assertTrue(all(parts), page[:3000])
        m = HEADLINE.search(html.unescape(parts[0].group(1) + ": " + parts[1].group(1)))
        self.assertTrue(m, page[:3000])
        self.assertEqual((count(m.group("k")), count(m.group("n"))), (checks, busy))
        self.assertIn("over the last 1h (--prediction.window", m.group("window"))
        self.assertRegex(self.views["page"], r'<span id="updated">\d\d:\d\d:\d\d UTC</span>')
        # The page's interval is /metrics' (the same window, the drains' design effect).
        lower, upper = interval_of(m)
        gauges = [t.select(self.views["metrics"], "usercopy_checks_busy_cpu_%s_ratio" % side,
                           estimator="sampling") for side in ("lower", "upper")]
        self.assertTrue(all(gauges), "no interval exported")
        print("interval: /metrics %.4f-%.4f %%, web view %s-%s %%" % (
            100 * gauges[0][0][1], 100 * gauges[1][0][1], lower, upper), flush=True)
        self.assertAlmostEqual(lower, 100 * gauges[0][0][1], delta=0.005 + 1e-9)
        self.assertAlmostEqual(upper, 100 * gauges[1][0][1], delta=0.005 + 1e-9)
        self.assertLessEqual(lower, 100 * share + 0.005)
        self.assertGreaterEqual(upper, 100 * share - 0.005)
        verdict = re.search(r'id="verdict">([^<]*)</p>', page).group(1)
        if m.group("share"):
            print("share of busy CPU: /metrics %.4f %%, web view %s %%" % (
                100 * share, m.group("share")), flush=True)
            self.assertAlmostEqual(float(m.group("share")), 100 * share,
                                   delta=tolerance(m.group("share")))
            self.assertTrue(t.select(self.views["metrics"], "usercopy_checks_busy_cpu_ratio",
                                     estimator="sampling"), "decided on the page, not on /metrics")
            self.assertIn("the checks cost %s %% of busy CPU" % m.group("share"), verdict)
        else:
            self.assertFalse(t.select(self.views["metrics"], "usercopy_checks_busy_cpu_ratio",
                                      estimator="sampling"), "collecting on the page only")
            self.assertTrue(verdict.startswith("collecting: "), verdict)

    def test_web_view_links_the_profile_of_its_window(self):
        _, checks, busy = self.metrics_share()
        page = self.views["page"]
        link = re.search(r'<a href="([^"]*)" id="window-profile">', page)
        self.assertTrue(link, page[-3000:])
        self.assertRegex(html.unescape(link.group(1)),
                         r"^debug/pprof/usercopy\?window=prediction&end=\d+$")
        types, samples = pprof_raw.read(ARGS.pprof, self.views["window_profile"])
        i = types.index("samples/count")
        # The window is longer than the run: the window's samples are all samples so far.
        self.assertEqual(sum(s.values[i] for s in samples), busy)
        self.assertEqual(sum(s.values[i] for s in samples if "context" not in s.labels), checks)

    def test_report_headline_is_the_metrics_share(self):
        share, checks, busy = self.metrics_share()
        r = subprocess.run([ARGS.hucprof, "report", self.views["profile"]], capture_output=True,
                           text=True, timeout=60)
        self.assertEqual(r.returncode, 0, r.stderr)
        m = HEADLINE.search(r.stdout)
        self.assertTrue(m, r.stdout)
        self.assertEqual((count(m.group("k")), count(m.group("n"))), (checks, busy))
        # A recording has no drains: Wilson's at the least design effect, 1.5.
        lower, upper = wilson(checks, busy)
        printed = interval_of(m)
        print("interval: Python %.4f-%.4f %%, hucprof report %s-%s %%" % (
            100 * lower, 100 * upper, *printed), flush=True)
        self.assertAlmostEqual(printed[0], 100 * lower, delta=0.005 + 1e-9)
        self.assertAlmostEqual(printed[1], 100 * upper, delta=0.005 + 1e-9)
        self.assertLess(lower, share)
        self.assertGreater(upper, share)
        # The verdict rule (docs/metrics.md): decided when the interval is at most half the share
        # wide, or at most 0.2 points.
        decided = upper - lower <= 0.5 * share or upper - lower <= 0.002
        self.assertEqual(bool(m.group("share")), decided, r.stdout)
        if decided:
            print("share of busy CPU: /metrics %.4f %%, hucprof report %s %%" % (
                100 * share, m.group("share")), flush=True)
            self.assertAlmostEqual(float(m.group("share")), 100 * share,
                                   delta=tolerance(m.group("share")))
            self.assertIn("\nverdict: the checks cost %s %% of busy CPU (95 %% interval %s-%s %%"
                          % (m.group("share"), m.group("lower"), m.group("upper")), r.stdout)
        else:
            self.assertNotIn("\nverdict:", r.stdout)
            self.assertIn("\ncollecting: ", r.stdout)

    def test_pprof_comments_carry_the_report_headline(self):
        r = subprocess.run([ARGS.pprof, "-comments", self.views["profile"]], capture_output=True,
                           text=True, timeout=60, check=True)
        comments = [line for line in r.stdout.splitlines() if line.startswith("hucprof.headline=")]
        self.assertEqual(len(comments), 1, r.stdout)
        report = subprocess.run([ARGS.hucprof, "report", self.views["profile"]],
                                capture_output=True, text=True, timeout=60, check=True).stdout
        self.assertEqual(HEADLINE.search(comments[0]).group(0), HEADLINE.search(report).group(0))

    def test_pprof_top_gives_the_metrics_share(self):
        share, checks, busy = self.metrics_share()
        types, samples = pprof_raw.read(ARGS.pprof, self.views["profile"])
        i = types.index("samples/count")
        self.assertEqual(sum(s.values[i] for s in samples), busy,
                         "pprof's total is busy CPU: every percentage it prints is of it")
        self.assertEqual(sum(s.values[i] for s in samples if "context" not in s.labels), checks)
        # -nodefraction=0, as docs/profiles.md says: pprof's default (0.005) hides every node
        # whose cum is at most 0.5 % of the focused samples, and "Showing nodes accounting for"
        # then leaves out their flat: once ~200 check samples are in, a leaf sampled once is gone.
        top = subprocess.run([ARGS.pprof, "-top", "-nodefraction=0", "-focus=" + CHECKS,
                              self.views["profile"]],
                             capture_output=True, text=True, timeout=60, check=True).stdout
        m = re.search(r"Showing nodes accounting for \S+, ([\d.]+)% of \S+ total", top)
        self.assertTrue(m, top)
        print("share of busy CPU: /metrics %.4f %%, pprof -top %s %%" % (100 * share, m.group(1)),
              flush=True)
        self.assertAlmostEqual(float(m.group(1)), 100 * share, delta=tolerance(m.group(1)))


def main():
    global ARGS
    ARGS, rest = t.script_args("hucprof", "flood", optional=["pprof"])
    return t.run_unittests(rest, ARGS.workdir, [
        (t.is_root(), "one number: needs root (BPF and perf_event_open)"),
        t.has_btf("one number"),
        (ARGS.pprof and os.access(ARGS.pprof, os.X_OK),
         "one number: Google's pprof was not built (scripts/install-deps.sh)"),
    ])


if __name__ == "__main__":
    sys.exit(main())
