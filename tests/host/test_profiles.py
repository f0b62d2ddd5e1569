#!/usr/bin/env python3
"""Host tier, profiles: `hucprof record` around a real UDP flood, `hucprof report` on the file,
Google's pprof reading it, and /debug/pprof/usercopy of a running daemon.

References written by no one here: Google's pprof (built from Debian's package) must find the
flood's stacks in hucprof's files; the flood itself is the ground truth of what ran."""

import gzip
import os
import re
import signal
import stat
import subprocess
import sys
import tempfile
import threading
import time
import unittest
import urllib.error
import urllib.request
from xml.etree import ElementTree

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "lib"))
import hucprof_testlib as t  # noqa: E402
import pprof_raw  # noqa: E402

ARGS = None
RAW_ADDRESS = re.compile(r"\b(0x)?ffff[0-9a-f]{12}\b", re.I)


def hucprof(*args, timeout=120):
    r = subprocess.run([ARGS.hucprof] + list(args), capture_output=True, text=True,
                       timeout=timeout)
    r.log = r.stdout + r.stderr  # log lines may go to either, the report's table to stdout
    return r


def pprof(*args):
    r = subprocess.run([ARGS.pprof] + list(args), capture_output=True, text=True, timeout=120)
    if r.returncode != 0:
        raise AssertionError("pprof %s: exit %d: %s" % (" ".join(args), r.returncode, r.stderr))
    return r.stdout


def flood_cmd(seconds):
    return [ARGS.flood, "--seconds", str(seconds), "--payload", "64"]


class RecordAroundAFlood(unittest.TestCase):
    """One `hucprof record -- flood`, several readers of the file."""

    @classmethod
    def setUpClass(cls):
        cls.path = os.path.join(ARGS.workdir, "host_flood.pb.gz")
        cls.svg = os.path.join(ARGS.workdir, "host_flood.svg")
        for p in (cls.path, cls.svg):
            if os.path.exists(p):
                os.unlink(p)
        cls.record = hucprof("record", "--mode", "sample", "--sample-frequency", "499",
                             "--interval", "1s", "-o", cls.path, "--", *flood_cmd(8))
        print("record:", cls.record.log[-1500:], flush=True)

    def test_record_writes_a_gzipped_profile(self):
        self.assertEqual(self.record.returncode, 0, self.record.log)
        self.assertIn("wrote " + self.path, self.record.log)
        with gzip.open(self.path, "rb") as f:
            self.assertGreater(len(f.read()), 100)

    def test_report_names_udp_recvmsg_and_gives_the_verdict(self):
        r = hucprof("report", self.path)
        print(r.stdout, flush=True)
        self.assertEqual(r.returncode, 0, r.stderr)
        rows = [l for l in r.stdout.splitlines() if re.search(r"\budp_recvmsg\s+recvfrom\b", l)]
        self.assertTrue(rows, "no udp_recvmsg/recvfrom row in the table")
        # share ± its interval, samples, CPU
        self.assertRegex(rows[0], r"^\s+(\d+\.\d+|<0\.01) % ±\d+(\.\d+)?\s+[\d,]+\s+\d+\.\d+ s\s")
        # A verdict once the interval is narrow enough, else how far from one (docs/metrics.md).
        self.assertRegex(r.stdout, r"\n(verdict: the checks cost \d+\.\d\d % of busy CPU \(95 % "
                                   r"interval \d+\.\d\d-\d+\.\d\d %; \d+\.\d+ cores\); booting "
                                   r"with hardened_usercopy=off|collecting: [\d,]+ samples? in the "
                                   r"checks.*\n  no verdict or prediction yet)")
        self.assertIsNone(RAW_ADDRESS.search(r.stdout))

    def test_pprof_finds_the_flood_stacks(self):
        # The checks are a small share of busy CPU: keep pprof from dropping their frames.
        top = pprof("-top", "-nodefraction=0", self.path)
        traces = pprof("-traces", self.path)
        self.assertIn("__check_object_size", top)
        self.assertIn("udp_recvmsg", top)
        blocks = [b for b in traces.split("-----------+") if re.search(r"callsite:\s+udp_recvmsg", b)]
        self.assertTrue(blocks, traces[:3000])
        frames = re.findall(r"^[ \t]+(?:\S+[ \t]+)?(\w[\w.]*)$", blocks[0], re.M)
        self.assertIn("udp_recvmsg", frames, blocks[0])
        self.assertTrue(any(f.startswith("__check_object_size") for f in frames), blocks[0])
        self.assertRegex(blocks[0], r"syscall:\s+recvfrom")

    def test_pprof_raw_has_no_kernel_address(self):
        raw = pprof("-raw", self.path)
        self.assertIn("[kernel.kallsyms]", raw)
        self.assertIsNone(RAW_ADDRESS.search(raw), "a raw kernel address in the profile")

    def test_report_writes_a_flame_graph(self):
        r = hucprof("report", "--flamegraph", self.svg, self.path)
        self.assertEqual(r.returncode, 0, r.stderr)
        with open(self.svg) as f:
            svg = f.read()
        self.assertIn("<svg", svg)
        self.assertIn(">udp_recvmsg<", svg)
        self.assertNotIn("<script", svg)
        # The title says what the graph is a share of, how sure, over which span: the report's
        # headline. Read with Python's XML parser.
        root = ElementTree.fromstring(svg.encode())
        texts = ["".join(e.itertext()) for e in root.iter("{http://www.w3.org/2000/svg}text")]
        report = hucprof("report", self.path).stdout
        headline = re.search(r"\n\n(.*): [\d,]+ of [\d,]+ busy samples", report).group(1)
        self.assertIn(self.path + ": " + headline + " over the profile's ", texts[0])
        self.assertRegex(texts[0], r"(of busy CPU is in the checks \(95 % interval|collecting: )")


CHECKS = "^(__check_object_size|check_heap_object)"


def share_of_busy(path):
    """Checks' samples / busy samples, by Google's pprof's reading of the file."""
    types, samples = pprof_raw.read(ARGS.pprof, path)
    i = types.index("samples/count")
    busy = sum(s.values[i] for s in samples)
    return sum(s.values[i] for s in samples if "context" not in s.labels) / busy, busy


# Runs the command given as arguments beside two busy loops per CPU, which end with it.
SPINNERS_BESIDE = """
import multiprocessing, subprocess, sys
def spin():
    while True:
        pass
spinners = [multiprocessing.Process(target=spin, daemon=True)
            for _ in range(2 * multiprocessing.cpu_count())]
for p in spinners:
    p.start()
sys.exit(subprocess.call(sys.argv[1:]))
"""


class DiffOfTwoRecordings(unittest.TestCase):
    """pprof -diff_base of a checks-heavy and a checks-light recording compares shares: the rest
    of busy CPU is in each profile, so -normalize scales by busy CPU."""

    def record(self, name, command):
        path = os.path.join(ARGS.workdir, name)
        r = hucprof("record", "--mode", "sample", "--sample-frequency", "499", "--interval",
                    "1s", "-o", path, "--", *command)
        self.assertEqual(r.returncode, 0, r.log)
        return path

    def test_normalized_diff_is_the_change_in_share(self):
        heavy = self.record("host_heavy.pb.gz", flood_cmd(6))
        # The same flood beside two user-space spinners per CPU: it gets about a third of the
        # CPU, so the checks are about a third of the share. (32 KiB datagrams were tried as
        # the light side: their share of busy CPU ranged 0.6-2.6 %, above the 64 B flood's
        # 1.1-1.7 % at times.)
        light = self.record("host_light.pb.gz", [sys.executable, "-c", SPINNERS_BESIDE] +
                            flood_cmd(6))
        share_heavy, _ = share_of_busy(heavy)
        share_light, busy_light = share_of_busy(light)
        self.assertGreater(share_heavy, share_light)
        diff = pprof("-top", "-normalize", "-focus=" + CHECKS, "-diff_base=" + light, heavy)
        m = re.search(r"Showing nodes accounting for \S+, (-?[\d.]+)% of \S+ total", diff)
        self.assertTrue(m, diff)
        printed = m.group(1)
        decimals = len(printed.split(".")[1]) if "." in printed else 0
        print("share of busy CPU: heavy %.3f %%, light %.3f %%, pprof -normalize -diff_base "
              "%s %%" % (100 * share_heavy, 100 * share_light, printed), flush=True)
        # pprof rounds each scaled sample to a whole nanosecond count: at most one sample's worth.
        self.assertAlmostEqual(float(printed), 100 * (share_heavy - share_light),
                               delta=0.5 * 10 ** -decimals + 100.0 * 2 / busy_light)


def callsite_shares(path):
    """{callsite: its samples / busy samples}, by Google's pprof's reading of the file."""
    types, samples = pprof_raw.read(ARGS.pprof, path)
    i = types.index("samples/count")
    busy = sum(s.values[i] for s in samples)
    shares = {}
    for s in samples:
        if "callsite" in s.labels:
            shares[s.labels["callsite"]] = shares.get(s.labels["callsite"], 0) + s.values[i] / busy
    return shares


def report_percent(share):
    """The report's rounding of a share: "0.50 %" below 1 %, "1.4 %" above."""
    return ("%.2f %%" if share * 100 < 1 else "%.1f %%") % (share * 100)


class ReportDiffOfTwoRecordings(unittest.TestCase):
    """`hucprof report --diff` of two recordings of known different composition: a UDP flood, and
    a user-space spinner that makes no syscall the flood does. The flood's call sites are in one
    and cannot be in the other (--only-command: nothing else is sampled), so their change is
    beyond noise both ways; the shares printed are the ones pprof reads in the files."""

    @classmethod
    def setUpClass(cls):
        cls.flood = os.path.join(ARGS.workdir, "host_diff_flood.pb.gz")
        cls.spin = os.path.join(ARGS.workdir, "host_diff_spin.pb.gz")
        spinner = [sys.executable, "-c",
                   "import time\nend = time.time() + 5\nwhile time.time() < end: pass"]
        for path, command in ((cls.flood, flood_cmd(8)), (cls.spin, spinner)):
            r = hucprof("record", "--mode", "sample", "--only-command", "--sample-frequency",
                        "999", "-o", path, "--", *command)
            assert r.returncode == 0, r.log

    def rows(self, text):
        """{callsite: cells} of the --diff table (the last cell is the call site)."""
        out = {}
        for line in text.splitlines():
            cells = line.split()
            if len(cells) >= 10 and cells[5] == "pp" and cells[7] == "to":
                out[cells[-1]] = cells
        return out

    def check(self, base, current):
        r = hucprof("report", "--diff", base, current)
        self.assertEqual(r.returncode, 0, r.stderr)
        print(r.stdout[-1500:], flush=True)
        rows = self.rows(r.stdout)
        base_shares, current_shares = callsite_shares(base), callsite_shares(current)
        flood_sites = [c for c, v in callsite_shares(self.flood).items() if v >= 0.005]
        self.assertTrue(any(v >= 0.01 for v in callsite_shares(self.flood).values()),
                        callsite_shares(self.flood))
        for callsite in flood_sites:
            cells = rows.get(callsite)
            self.assertIsNotNone(cells, (callsite, r.stdout))
            # pprof's shares beside each assertion: a CI summary shows only the failing line.
            why = (callsite, "pprof's shares", base_shares.get(callsite, 0),
                   current_shares.get(callsite, 0), cells)
            self.assertEqual(" ".join(cells[0:2]), report_percent(base_shares.get(callsite, 0)),
                             why)
            self.assertEqual(" ".join(cells[2:4]),
                             report_percent(current_shares.get(callsite, 0)), why)
            # 1 % of the flood's busy samples (about 40 on a loaded machine) against none:
            # beyond noise; a smaller share may not be.
            if max(base_shares.get(callsite, 0), current_shares.get(callsite, 0)) >= 0.01:
                self.assertIn("*", cells, (why, "beyond noise"))
        self.assertIn("beyond noise", re.search(r"^in the checks: .*$", r.stdout, re.M).group(0))
        # Every change called beyond noise goes the way pprof's shares go, and its interval is
        # on that side of 0. The spinner's own checks (Python's start-up opens hundreds of files:
        # getname_flags) can be beyond noise too, the other way.
        for callsite, cells in rows.items():
            if "*" not in cells:
                continue
            grew = current_shares.get(callsite, 0) > base_shares.get(callsite, 0)
            self.assertEqual(cells[4][0], "+" if grew else "-", (callsite, cells))
            if grew:
                self.assertGreater(float(cells[6]), 0, (callsite, cells))
            else:
                self.assertLess(float(cells[8]), 0, (callsite, cells))
        return rows, flood_sites

    def flood_rows(self, base, current):
        """The --diff rows of the flood's call sites of at least 1 % (beyond noise, above)."""
        rows, sites = self.check(base, current)
        big = [c for c in sites if callsite_shares(self.flood)[c] >= 0.01]
        self.assertTrue(big)
        return [rows[c] for c in big]

    def test_the_floods_call_sites_appear(self):
        for cells in self.flood_rows(self.spin, self.flood):
            self.assertTrue(cells[4].startswith("+"), cells)

    def test_and_disappear(self):
        for cells in self.flood_rows(self.flood, self.spin):
            self.assertTrue(cells[4].startswith("-"), cells)

    def test_folded_counts_are_the_recordings_samples(self):
        r = hucprof("report", "--folded", self.flood)
        self.assertEqual(r.returncode, 0, r.stderr)
        total = sum(int(line.rpartition(" ")[2]) for line in r.stdout.splitlines())
        types, samples = pprof_raw.read(ARGS.pprof, self.flood)
        i = types.index("samples/count")
        self.assertEqual(total, sum(s.values[i] for s in samples))
        self.assertRegex(r.stdout, r"(^|;)udp_(recv|send)msg;.*__check_object_size")


class BrokenFiles(unittest.TestCase):
    """A corrupt or truncated file: a clear message naming it, exit 2, never a crash."""

    @classmethod
    def setUpClass(cls):
        cls.dir = tempfile.mkdtemp(prefix="huc-broken-", dir=ARGS.workdir)
        good = os.path.join(cls.dir, "good.pb.gz")
        r = subprocess.run([ARGS.fixture, good], capture_output=True, text=True)
        assert r.returncode == 0, r.stderr
        with open(good, "rb") as f:
            cls.good = f.read()

    def write(self, name, data):
        path = os.path.join(self.dir, name)
        with open(path, "wb") as f:
            f.write(data)
        return path

    def assert_refused(self, path, reason):
        r = hucprof("report", path)
        self.assertEqual(r.returncode, 2, (r.stdout, r.stderr))
        self.assertEqual(r.stdout, "")
        self.assertRegex(r.stderr, r"^hucprof report: " + re.escape(path) + r": .*" + reason)
        self.assertEqual(len(r.stderr.strip().splitlines()), 1, r.stderr)

    def test_a_good_file_reads(self):
        r = hucprof("report", self.write("ok.pb.gz", self.good))
        self.assertEqual(r.returncode, 0, r.stderr)

    def test_truncated(self):
        for cut in (1, 10, len(self.good) // 2, len(self.good) - 1):
            self.assert_refused(self.write("cut%d.pb.gz" % cut, self.good[:cut]),
                                "(truncated|corrupt|parse)")

    def test_corrupt(self):
        data = bytearray(self.good)
        for i in range(12, min(len(data), 60)):
            data[i] ^= 0xA5
        self.assert_refused(self.write("flipped.pb.gz", bytes(data)), "(corrupt|pprof|parse)")
        self.assert_refused(self.write("text.pb.gz", b"hello, not a profile\n" * 10),
                            "not a pprof profile")
        self.assert_refused(self.write("gztext.pb.gz", gzip.compress(b"\x00\x01\x02" * 50)),
                            "not a pprof profile")

    def test_empty_missing_and_directory(self):
        self.assert_refused(self.write("empty.pb.gz", b""), "empty file")
        self.assert_refused(os.path.join(self.dir, "missing.pb.gz"), "No such file")
        self.assert_refused(self.dir, "Is a directory")
        fifo = os.path.join(self.dir, "fifo.pb.gz")
        os.mkfifo(fifo)
        self.assert_refused(fifo, "not a regular file")  # it blocked forever before


class RecordRefusals(unittest.TestCase):
    def test_unwritable_output_is_refused_before_attaching(self):
        r = hucprof("record", "--duration", "1s", "-o", "/nonexistent-dir/x.pb.gz")
        self.assertEqual(r.returncode, 2, r.log)
        self.assertIn("-o /nonexistent-dir/x.pb.gz: cannot create a file in /nonexistent-dir: No such file", r.log)
        self.assertNotIn("sampler:", r.log, "attached before checking -o")

    def test_missing_command_is_named(self):
        out = os.path.join(ARGS.workdir, "never.pb.gz")
        r = hucprof("record", "--mode", "sample", "-o", out, "--", "/no/such/command")
        self.assertEqual(r.returncode, 2, r.log)
        self.assertIn("cannot run /no/such/command: No such file or directory", r.log)
        self.assertFalse(os.path.exists(out))

    def test_a_device_node_at_the_output_is_written_into_never_replaced(self):
        # `record -o /dev/null` as root replaced the machine's /dev/null by a regular file. A
        # node of its own, in a temporary directory: the machine's is never touched.
        tmp = tempfile.mkdtemp(prefix="huc-out-", dir=ARGS.workdir)
        null = os.path.join(tmp, "null")
        os.mknod(null, 0o666 | stat.S_IFCHR, os.makedev(1, 3))
        r = hucprof("record", "--mode", "sample", "--duration", "1s", "-o", null)
        self.assertEqual(r.returncode, 0, r.log)
        self.assertTrue(stat.S_ISCHR(os.lstat(null).st_mode), "replaced by a %o" % os.lstat(null).st_mode)
        self.assertEqual(os.lstat(null).st_rdev, os.makedev(1, 3))
        # -o /dev/stdout redirected to a file: the symlink is followed, the file gets the profile.
        out = os.path.join(tmp, "stdout.pb.gz")
        with open(out, "wb") as f:
            r = subprocess.run([ARGS.hucprof, "record", "--mode", "sample", "--duration", "1s",
                                "-o", "/dev/stdout"], stdout=f, stderr=subprocess.PIPE, text=True,
                               timeout=120)
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertEqual(hucprof("report", out).returncode, 0)

    def test_a_command_that_ignores_signals_is_killed_at_the_second(self):
        # perf record's way: the first Ctrl-C ends the recording and is passed on, the next
        # kills what ignores it. hucprof waited through SIGINT, SIGINT, SIGTERM.
        out = os.path.join(ARGS.workdir, "stubborn.pb.gz")
        stubborn = [sys.executable, "-c",
                    "import signal, time\n"
                    "for s in (signal.SIGINT, signal.SIGTERM): signal.signal(s, signal.SIG_IGN)\n"
                    "time.sleep(300)"]
        proc = subprocess.Popen([ARGS.hucprof, "record", "--mode", "sample", "-o", out, "--"] + stubborn,
                                stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        time.sleep(4)  # attached and recording
        proc.send_signal(signal.SIGINT)
        time.sleep(2)  # the file is written, COMMAND still runs
        self.assertIsNone(proc.poll(), "hucprof should wait for COMMAND after the first Ctrl-C")
        proc.send_signal(signal.SIGINT)
        log, _ = proc.communicate(timeout=30)
        print(log[-800:], flush=True)
        self.assertIn("received SIGINT again: killing", log)
        self.assertIn("exited with status 137", log)
        self.assertEqual(proc.returncode, 0, log)
        self.assertEqual(hucprof("report", out).returncode, 0)

    def test_duration_alone_records(self):
        out = os.path.join(ARGS.workdir, "duration.pb.gz")
        started = time.monotonic()
        r = hucprof("record", "--mode", "sample", "--duration", "2s", "-o", out)
        self.assertEqual(r.returncode, 0, r.log)
        self.assertGreaterEqual(time.monotonic() - started, 2.0)
        self.assertEqual(hucprof("report", out).returncode, 0)


class DaemonProfiles(unittest.TestCase):
    """/debug/pprof/usercopy of a running daemon during a flood."""

    @classmethod
    def setUpClass(cls):
        cls.daemon = t.Daemon.started(ARGS.hucprof, ["--mode", "sample", "--interval", "1s",
                                                     "--sample-frequency", "499"],
                                      os.path.join(ARGS.workdir, "host_profiles_daemon.log"))

    @classmethod
    def tearDownClass(cls):
        cls.daemon.stop()

    def fetch(self, query=""):
        try:
            with urllib.request.urlopen(self.daemon.url("/debug/pprof/usercopy" + query),
                                        timeout=60) as r:
                return r.status, r.headers.get("Content-Type"), r.read()
        except urllib.error.HTTPError as e:
            return e.code, e.headers.get("Content-Type"), e.read()

    def test_window_of_the_next_seconds_holds_the_flood(self):
        flood = subprocess.Popen(flood_cmd(10), stdout=subprocess.DEVNULL)
        try:
            time.sleep(1)
            started = time.monotonic()
            status, ctype, body = self.fetch("?seconds=4")
            took = time.monotonic() - started
        finally:
            flood.wait(timeout=60)
        self.assertEqual(status, 200, body[:300])
        self.assertEqual(ctype, "application/octet-stream")
        self.assertGreaterEqual(took, 4.0)
        path = os.path.join(ARGS.workdir, "host_window.pb.gz")
        with open(path, "wb") as f:
            f.write(body)
        raw = pprof("-raw", path)
        duration = float(re.search(r"Duration: ([\d.]+)", raw).group(1))
        self.assertGreaterEqual(duration, 4.0)
        self.assertLess(duration, 4.0 + 3.0, "a window of about 4 s, not since start")
        self.assertIn("udp_recvmsg", pprof("-top", "-nodefraction=0", path))

    def test_cumulative_profile_and_bad_seconds(self):
        status, ctype, body = self.fetch()
        self.assertEqual(status, 200)
        self.assertEqual(body[:2], b"\x1f\x8b")
        for bad in ("0", "601", "abc", "1.5"):
            status, _, text = self.fetch("?seconds=" + bad)
            self.assertEqual(status, 400, bad)
            self.assertIn(b"whole number of seconds from 1 to 600", text)


def main():
    global ARGS
    ARGS, rest = t.script_args("hucprof", "flood", "fixture", optional=["pprof"])
    return t.run_unittests(rest, ARGS.workdir, [
        (t.is_root(), "host profiles: needs root (BPF and perf_event_open)"),
        (ARGS.pprof and os.access(ARGS.pprof, os.X_OK),
         "host profiles: Google's pprof was not built (golang-go and "
         "golang-github-google-pprof-dev: scripts/install-deps.sh)"),
    ])


if __name__ == "__main__":
    sys.exit(main())
