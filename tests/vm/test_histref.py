#!/usr/bin/env python3
"""Unit tests of the hist-trigger parser, on real output captured from Debian 6.1 and 6.12 guests."""

import gzip
import re
import sys
import unittest
from pathlib import Path

sys.dont_write_bytecode = True  # keep the source tree clean
sys.path.insert(0, str(Path(__file__).resolve().parent))
import histref  # noqa: E402

DATA = Path(__file__).resolve().parent / "testdata"


def assert_udp_pairs(test, h):
    """What the kernel must have counted for udp_pairs 1000 64: each pair one 64-byte check
    into the user (udp_recvmsg) and one out of it (ip_generic_getfrag)."""
    p = "__check_object_size"
    test.assertEqual(h.sum(probed=p, contains=["udp_recvmsg"], to_user=1), 1000)
    test.assertEqual(h.sum("n", probed=p, contains=["udp_recvmsg"], to_user=1), 64000)
    test.assertEqual(h.sum(probed=p, caller="ip_generic_getfrag", to_user=0), 1000)
    test.assertEqual(h.sum(probed=p, contains=["udp_recvmsg"], to_user=0), 0)


class RealOutput(unittest.TestCase):
    def test_udp_counts_6_1(self):
        h = histref.parse_file(DATA / "hist-6.1-ucheck-udp.txt")
        self.assertEqual(h.key_name, "stacktrace")
        self.assertEqual(h.totals, {"Hits": 4064, "Entries": 16, "Dropped": 0})
        assert_udp_pairs(self, h)

    def test_udp_counts_6_12_common_stacktrace(self):
        h = histref.parse_file(DATA / "hist-6.12-ucheck-udp.txt")
        self.assertEqual(h.key_name, "common_stacktrace")
        p = "__check_object_size"
        self.assertEqual(h.sum(probed=p, contains=["udp_sendmsg"], to_user=0), 1000)
        self.assertEqual(h.sum(probed=p, caller="move_addr_to_user"), 1002)  # + 2 getsockname
        self.assertEqual(h.sum(probed=p, caller="move_addr_to_user", contains=["__sys_recvfrom"]), 1000)

    def test_callers_drop_kprobe_frames_and_addresses(self):
        h = histref.parse_file(DATA / "hist-6.1-uvmap-netlink64k.txt")
        e = h.select(probed="find_vmap_area", contains=["netlink_sendmsg"])[0]
        names = [f.name for f in e.callers("find_vmap_area")]
        self.assertEqual(names[:3], ["__check_object_size", "netlink_sendmsg", "__sock_sendmsg"])
        self.assertNotIn(None, names)
        self.assertEqual(e.stack[0].name, "kprobe_ftrace_handler")
        self.assertIsNone(e.stack[1].name)          # the trampoline address, never kept
        self.assertIn("?", str(e.stack[1]))

    def test_module_frames_and_suffixes(self):
        h = histref.parse_file(DATA / "hist-6.1-ucheck-udp.txt")
        frames = [f for e in h.entries for f in e.stack]
        mod = [f for f in frames if f.module == "9pnet"]
        self.assertTrue(mod and mod[0].name == "p9_client_read_once")
        isra = [f for f in frames if f.name == "do_execveat_common.isra.0"]
        self.assertEqual(isra[0].base, "do_execveat_common")


class FromTrace(unittest.TestCase):
    """Debian 11's 5.10 has no hist triggers: the reference counts a kprobe trace buffer with
    stacks (refprobe.sh, REF_MODE=trace). The input is the trace its kernel wrote during 1000 UDP
    pairs of 64 bytes (udp_pairs), booted with hardened_usercopy=off: __check_object_size is
    still entered there."""

    TRIGGERS = {"ucheck": "hist:keys=stacktrace,to_user:vals=n:size=8192",
                "upid": "hist:keys=common_pid:vals=n:size=8192"}

    @classmethod
    def setUpClass(cls):
        with gzip.open(DATA / "trace-5.10-off-udp.txt.gz", "rt") as f:
            cls.trace = f.read()
        cls.texts = histref.hist_texts_from_trace(cls.trace, cls.TRIGGERS, dropped=3)

    def test_every_event_counted_once(self):
        events = [ln for ln in self.trace.splitlines() if ": ucheck: (" in ln]
        h = histref.parse(self.texts["ucheck"])
        self.assertEqual(h.totals["Hits"], len(events))
        self.assertEqual(sum(e.hitcount for e in h.entries), len(events))
        self.assertEqual(h.totals["Dropped"], 3)
        n = sum(int(re.search(r" n=(\d+)", ln).group(1)) for ln in events)
        self.assertEqual(sum(e.vals["n"] for e in h.entries), n)

    def test_the_workloads_checks(self):
        h = histref.parse(self.texts["ucheck"])
        self.assertEqual(h.key_name, "stacktrace")
        assert_udp_pairs(self, h)

    def test_keyed_by_pid(self):
        """What vm_tier_checks.workload_rows reads: one line per pid with its hits and bytes."""
        want = {}
        for pid, n in re.findall(r"-(\d+)\s+\[\d+\] \S+\s+[\d.]+: upid: \([^)]*\) n=(\d+)",
                                 self.trace):
            hits, total = want.get(int(pid), (0, 0))
            want[int(pid)] = (hits + 1, total + int(n))
        got = {int(pid): (int(hits), int(n)) for pid, hits, n in re.findall(
            r"\{\s*common_pid:\s*(\d+)\s*\}\s*hitcount:\s*(\d+)\s+n:\s*(\d+)",
            self.texts["upid"])}
        self.assertEqual(got, want)
        self.assertGreater(len(want), 1)


class Malformed(unittest.TestCase):
    def test_truncated(self):
        text = (DATA / "hist-6.1-ucheck-udp.txt").read_text()
        with self.assertRaises(histref.HistParseError):
            histref.parse(text[: len(text) // 2])

    def test_no_totals(self):
        text = (DATA / "hist-6.1-uvmap-netlink64k.txt").read_text().split("Totals:")[0]
        with self.assertRaises(histref.HistParseError):
            histref.parse(text)

    def test_entries_mismatch(self):
        text = (DATA / "hist-6.1-uvmap-netlink64k.txt").read_text().replace("Entries: 2", "Entries: 3")
        with self.assertRaises(histref.HistParseError):
            histref.parse(text)

    def test_garbage_frame(self):
        text = (DATA / "hist-6.1-uvmap-netlink64k.txt").read_text().replace(
            "netlink_sendmsg+0x202/0x4c0", "netlink sendmsg ???")
        with self.assertRaises(histref.HistParseError):
            histref.parse(text)


if __name__ == "__main__":
    unittest.main()
