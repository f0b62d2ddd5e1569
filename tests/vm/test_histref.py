#!/usr/bin/env python3
"""Unit tests of the hist-trigger parser, on real output captured from Debian 6.1 and 6.12 guests."""

import sys
import unittest
from pathlib import Path

sys.dont_write_bytecode = True  # keep the source tree clean
sys.path.insert(0, str(Path(__file__).resolve().parent))
import histref  # noqa: E402

DATA = Path(__file__).resolve().parent / "testdata"


class RealOutput(unittest.TestCase):
    def test_udp_counts_6_1(self):
        h = histref.parse_file(DATA / "hist-6.1-ucheck-udp.txt")
        self.assertEqual(h.key_name, "stacktrace")
        self.assertEqual(h.totals, {"Hits": 4064, "Entries": 16, "Dropped": 0})
        p = "__check_object_size"
        self.assertEqual(h.sum(probed=p, contains=["udp_recvmsg"], to_user=1), 1000)
        self.assertEqual(h.sum("n", probed=p, contains=["udp_recvmsg"], to_user=1), 64000)
        self.assertEqual(h.sum(probed=p, caller="ip_generic_getfrag", to_user=0), 1000)
        self.assertEqual(h.sum(probed=p, contains=["udp_recvmsg"], to_user=0), 0)

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
