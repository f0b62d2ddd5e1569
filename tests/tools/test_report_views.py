#!/usr/bin/env python3
"""`hucprof report --folded`, `--sort`, `--percent-limit` and `--diff` against references that no
one here wrote (no root, no kernel).

  --check folded: the folded stacks are what Brendan Gregg's flamegraph.pl renders (its SVG read
      back with Python's XML parser: every frame and the whole, with their counts), and their
      counts are Google's pprof's: the same stacks with the same samples, summing to the
      profile's sample total as `pprof -raw` reads it.
  --check speedscope: speedscope (its npm release, in headless Chromium) imports the folded stacks
      as collapsed stacks, and the profile it exports again holds the same frames and stacks with
      the same weights, summing to `pprof -raw`'s sample total.
  --check tables: the shares --sort and --diff print are the ones worked out here from
      `pprof -raw` (samples with the label over all samples, the rest of busy CPU included);
      bad keys are refused in one line (exit 2).

The profiles are tests/lib/fixture_profile.h's, written by huc_profile_fixture through hucprof's
pprof writer; a checks-light variant (more user CPU) is the other side of --diff."""

import collections
import os
import re
import subprocess
import sys
import tempfile
import unittest
import xml.etree.ElementTree as ET

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "lib"))
import headless_chromium as chromium  # noqa: E402
import hucprof_testlib as t  # noqa: E402
import pprof_raw  # noqa: E402
import speedscope_import  # noqa: E402

ARGS = None
SVG = "{http://www.w3.org/2000/svg}"


def report(*args, check=True):
    r = subprocess.run([ARGS.hucprof, "report"] + list(args), capture_output=True, text=True,
                       timeout=60)
    if check and r.returncode != 0:
        raise AssertionError("hucprof report %s: exit %d: %s" % (args, r.returncode, r.stderr))
    return r


def pprof_samples(path):
    """[(names root first, samples, labels)] of what pprof reads in the file."""
    types, samples = pprof_raw.read(ARGS.pprof, path)
    at = types.index("samples/count")
    return [(list(reversed(s.names)), s.values[at], s.labels) for s in samples]


def pprof_stacks(path):
    """{"root;...;leaf": samples} of the stacks with samples that pprof reads in the file."""
    out = collections.Counter()
    for names, n, _ in pprof_samples(path):
        if n:
            out[";".join(names)] += n
    return out


def folded(text):
    """{stack: count} of folded stacks; each line is "frame;frame count"."""
    out = collections.Counter()
    for line in text.splitlines():
        stack, _, count = line.rpartition(" ")
        out[stack] += int(count)
    return out


class Fixtures(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.dir = tempfile.mkdtemp(prefix="huc-report-views-")
        cls.heavy = os.path.join(cls.dir, "heavy.pb.gz")
        cls.light = os.path.join(cls.dir, "light.pb.gz")
        subprocess.run([ARGS.fixture, cls.heavy], check=True)
        subprocess.run([ARGS.fixture, "--user-samples", "20000", cls.light], check=True)


class FoldedStacks(Fixtures):
    def test_counts_are_pprofs_stacks_and_total(self):
        for path in (self.heavy, self.light):
            stacks = folded(report("--folded", path).stdout)
            self.assertEqual(stacks, pprof_stacks(path))
            self.assertEqual(sum(stacks.values()), sum(n for _, n, _ in pprof_samples(path)))

    def test_flamegraph_pl_draws_every_frame_with_its_count(self):
        text = report("--folded", self.heavy).stdout
        svg = os.path.join(self.dir, "heavy.svg")
        with open(svg, "w") as out:
            subprocess.run([ARGS.flamegraph_pl], input=text, stdout=out, text=True, check=True,
                           timeout=60)
        titles = [e.text for e in ET.parse(svg).getroot().iter(SVG + "title")]
        counts = {}
        for title in titles:
            m = re.match(r"^(.*) \(([\d,]+) samples?, [\d.]+%\)$", title or "")
            if m:
                counts[m.group(1)] = counts.get(m.group(1), 0) + int(m.group(2).replace(",", ""))
        total = sum(n for _, n, _ in pprof_samples(self.heavy))
        self.assertEqual(counts.get("all"), total, titles)
        # Every frame of every stack is drawn, with the samples of the stacks through it.
        through = collections.Counter()
        for stack, n in folded(text).items():
            for frame in set(stack.split(";")):
                through[frame] += n
        for frame, n in through.items():
            self.assertEqual(counts.get(frame), n, frame)
        self.assertEqual(counts.get("__check_object_size"), 7)
        self.assertEqual(counts.get("[user CPU]"), 400)

    def test_speedscope_imports_every_stack_with_its_weight(self):
        for name, path in (("heavy", self.heavy), ("light", self.light)):
            text = report("--folded", path).stdout
            workdir = os.path.join(self.dir, "speedscope-" + name)
            export, console = speedscope_import.export_of(
                text, speedscope_import.tarball(ARGS.speedscope_dir), workdir)
            self.assertIn("Importing as collapsed stack format", console)
            self.assertEqual(export["exporter"], speedscope_import.pinned()[0])
            parsed = speedscope_import.stacks(export)
            self.assertEqual(parsed, pprof_stacks(path))
            self.assertEqual(sum(parsed.values()), sum(n for _, n, _ in pprof_samples(path)))


def shares(path, label):
    """{label value: its samples' share of all samples} as pprof reads the file."""
    samples = pprof_samples(path)
    total = sum(n for _, n, _ in samples)
    by = collections.Counter()
    for _, n, labels in samples:
        if n and label in labels:
            by[labels[label]] += n
    return {k: v / total for k, v in by.items()}


def percent(share):
    """The report's rounding: "0.50 %" below 1 %, "1.4 %" above."""
    return ("%.2f %%" if share * 100 < 1 else "%.1f %%") % (share * 100)


class Tables(Fixtures):
    def rows(self, text, name):
        """The table lines that end in `name`."""
        return [line for line in text.splitlines() if line.rstrip().endswith(" " + name)]

    def test_sort_by_syscall_gives_pprofs_shares(self):
        text = report("--sort", "syscall", self.heavy).stdout
        expected = shares(self.heavy, "syscall")
        self.assertEqual(set(expected), {"recvfrom", "recvmsg"})
        for syscall, share in expected.items():
            rows = self.rows(text, syscall)
            self.assertEqual(len(rows), 1, text)
            self.assertTrue(rows[0].strip().startswith(percent(share)), (rows[0], share))

    def test_percent_limit_hides_and_counts(self):
        expected = shares(self.heavy, "callsite")
        small = min(expected, key=expected.get)
        limit = (expected[small] * 100 + max(expected.values()) * 100) / 2
        text = report("--percent-limit", "%.3f" % limit, self.heavy).stdout
        self.assertEqual(self.rows(text, small), [], text)
        self.assertIn("(1 row below %.3f %% hidden, %s together)" % (limit, percent(expected[small])),
                      text)

    def test_diff_gives_both_shares_and_marks_the_change(self):
        text = report("--diff", self.light, self.heavy).stdout
        base, current = shares(self.light, "callsite"), shares(self.heavy, "callsite")
        row = self.rows(text, "udp_recvmsg")
        self.assertEqual(len(row), 1, text)
        cells = row[0].split()
        self.assertEqual(" ".join(cells[0:2]), percent(base["udp_recvmsg"]), row)
        self.assertEqual(" ".join(cells[2:4]), percent(current["udp_recvmsg"]), row)
        change = 100 * (current["udp_recvmsg"] - base["udp_recvmsg"])
        self.assertEqual(cells[4], "%+.2f" % change, row)
        # 7 samples of 1 400 against 7 of 21 000: beyond noise.
        self.assertIn("*", cells, row)
        lower, upper = float(cells[6]), float(cells[8])
        self.assertLess(lower, change)
        self.assertGreater(upper, change)
        self.assertGreater(lower, 0)

    def test_a_profile_against_itself_changes_nothing(self):
        text = report("--diff", self.heavy, self.heavy).stdout
        for callsite in shares(self.heavy, "callsite"):
            row = self.rows(text, callsite)
            self.assertEqual(len(row), 1, text)
            self.assertIn("+0.00 pp", row[0])
            self.assertNotIn("*", row[0].split())

    def test_bad_flags_are_one_line_and_exit_2(self):
        for args in (["--sort", "sym"], ["--sort", "callsite,"], ["--sort", "comm"],
                     ["--percent-limit", "101"], ["--percent-limit", "x"],
                     ["--folded", "--sort", "callsite"], ["--diff", "/nonexistent.pb.gz"]):
            r = report(*(args + [self.heavy]), check=False)
            self.assertEqual(r.returncode, 2, (args, r.stderr))
            self.assertEqual(len(r.stderr.strip().splitlines()), 1, (args, r.stderr))
            self.assertEqual(r.stdout, "", args)
        r = report("--sort", "sym", self.heavy, check=False)
        self.assertIn("callsite, syscall, copy, step, workload, comm", r.stderr)
        self.assertIn("no comm label", report("--sort", "comm", self.heavy, check=False).stderr)


def main():
    global ARGS
    ARGS, rest = t.script_args("hucprof", "fixture", "check",
                               optional=["pprof", "flamegraph_pl", "speedscope_dir"],
                               workdir=False)
    requirements = [(ARGS.pprof and os.access(ARGS.pprof, os.X_OK),
                     "Google's pprof was not built (needs golang-go and "
                     "golang-github-google-pprof-dev: scripts/install-deps.sh)")]
    if ARGS.check == "folded":
        rest = ["FoldedStacks.test_counts_are_pprofs_stacks_and_total"] + rest
    elif ARGS.check == "flamegraph_pl":
        requirements.append((ARGS.flamegraph_pl and os.access(ARGS.flamegraph_pl, os.X_OK),
                             "no flamegraph.pl (Brendan Gregg's FlameGraph; Debian's `flamegraph` "
                             "package where it exists) on PATH or given by "
                             "-DHUC_FLAMEGRAPH_PL=PATH"))
        rest = ["FoldedStacks.test_flamegraph_pl_draws_every_frame_with_its_count"] + rest
    elif ARGS.check == "speedscope":
        why = (speedscope_import.missing_reason(speedscope_import.tarball(ARGS.speedscope_dir))
               if ARGS.speedscope_dir else "no --speedscope_dir")
        requirements += [(why is None, why),
                         (chromium.find(), "no chromium on PATH (scripts/install-deps.sh)")]
        rest = ["FoldedStacks.test_speedscope_imports_every_stack_with_its_weight"] + rest
    else:
        rest = ["Tables"] + rest
    return t.run_unittests(rest, requirements=requirements)


if __name__ == "__main__":
    sys.exit(main())
