#!/usr/bin/env python3
"""Google's pprof reads what hucprof's pprof writer writes (no root, no kernel).

huc_profile_fixture writes the profile spelled out in tests/lib/fixture_profile.h; pprof
(built from Debian's golang-github-google-pprof-dev) must show exactly that: the stacks leaf
first, the labels, the values per sample type, CPU time = samples x 10101010 ns, no kernel
address, and percentages of busy CPU (the rest of it is in the profile), also across a
-diff_base of a checks-heavy and a checks-light profile. The daemon's real profiles are read by
pprof in the host and VM tiers."""

import os
import re
import subprocess
import sys
import tempfile
import unittest

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "lib"))
import hucprof_testlib as t  # noqa: E402

ARGS = None
RAW_ADDRESS = re.compile(r"0x[fF]{4}[0-9a-fA-F]{12}")


def pprof(*args):
    r = subprocess.run([ARGS.pprof] + list(args), capture_output=True, text=True, timeout=60)
    if r.returncode != 0:
        raise AssertionError("pprof %s failed (%d): %s" % (" ".join(args), r.returncode, r.stderr))
    return r.stdout


class PprofReadsFixture(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.dir = tempfile.mkdtemp(prefix="huc-pprof-")
        cls.path = os.path.join(cls.dir, "fixture.pb.gz")
        subprocess.run([ARGS.fixture, cls.path], check=True)

    def test_traces_are_the_stacks_leaf_first_with_labels(self):
        out = pprof("-traces", self.path)
        blocks = [b for b in out.split("-----------+") if "callsite:" in b]
        self.assertEqual(len(blocks), 4, out)
        first = blocks[0]
        self.assertRegex(first, r"callsite:\s+udp_recvmsg")
        self.assertRegex(first, r"syscall:\s+recvfrom")
        # The label of /metrics (`step`), as Google's pprof reads it off the file.
        self.assertRegex(first, r"step:\s+object")
        frames = re.findall(r"^[ \t]+(?:\S+ms[ \t]+)?(\w[\w.]*)[ \t]*$", first, re.M)
        self.assertEqual(frames, ["__check_object_size", "nft_do_chain", "udp_recvmsg"], first)
        # 7 samples at 10101010 ns
        self.assertIn("70.71ms", first)
        netlink = [b for b in blocks if "netlink_recvmsg" in b][0]
        self.assertIn("__check_object_size.cold", netlink, "suffixes are kept")
        self.assertIn("20.20ms", netlink)

    def test_raw_has_every_sample_type_and_value(self):
        out = pprof("-raw", self.path)
        self.assertRegex(out, r"samples/count\s+cpu/nanoseconds\[dflt\]\s+calls/count\s+"
                              r"bytes/bytes\s+latency/nanoseconds\s+subchecks/count")
        self.assertRegex(out, r"\b7\s+70707070\s+0\s+0\s+0\s+0:")
        self.assertRegex(out, r"\b0\s+0\s+1000\s+64000\s+192000\s+0:")
        self.assertRegex(out, r"\b0\s+0\s+0\s+0\s+0\s+3:")
        self.assertIn("PeriodType: cpu nanoseconds", out)
        self.assertIn("Period: 10101010", out)
        self.assertIn("Duration: 30s", out)
        # The rest of busy CPU as samples: 1000 kernel - 9 in the checks, 400 user; idle is not
        # busy and stays a comment.
        self.assertRegex(out, r"\b991\s+10010100910\s+0\s+0\s+0\s+0: \d+ \d+ \n\s+context:\[kernel\]")
        self.assertRegex(out, r"\b400\s+4040404000\s+0\s+0\s+0\s+0: \d+ \d+ \n\s+context:\[user\]")
        self.assertIn("hucprof.sampled_cpu_samples.idle=8000", out)
        self.assertNotIn("sampled_cpu_samples.kernel", out)

    def test_addresses_are_offsets_from_stext_never_kernel_addresses(self):
        out = pprof("-raw", self.path)
        self.assertIsNone(RAW_ADDRESS.search(out), out)
        self.assertRegex(out, r"0x6c9275 M=1 __check_object_size")
        self.assertRegex(out, r"0x0 M=\d+ nft_do_chain")
        self.assertRegex(out, r"\[kernel\.kallsyms\]")
        self.assertRegex(out, r"\[nf_tables\]")

    def test_top_per_sample_type(self):
        cpu = pprof("-top", self.path)
        # Of busy CPU: 1400 samples x 10101010 ns.
        self.assertRegex(cpu, r"Total samples = 14.14s")
        self.assertRegex(cpu, r"(?m)^\s*0.07s\s+0.5%.*\s__check_object_size$")
        self.assertRegex(cpu, r"(?m)^\s*10.01s\s+70.79%.*\s\[other kernel CPU\]$")
        self.assertRegex(cpu, r"(?m)^\s*4.04s\s+28.57%.*\s\[user CPU\]$")
        # The checks' share of busy CPU, as hucprof's headline gives it: 9 of 1400 samples.
        checks = pprof("-top", "-focus=^__check_object_size", self.path)
        self.assertRegex(checks, r"Showing nodes accounting for 0.09s, 0.64% of 14.14s total")
        calls = pprof("-top", "-sample_index=calls", self.path)
        self.assertRegex(calls, r"Total samples = 1000\b")
        sub = pprof("-top", "-sample_index=subchecks", self.path)
        self.assertRegex(sub, r"\b3\s+100%\s+100%\s+3\s+100%\s+find_vmap_area")

    def test_diff_of_heavy_and_light_compares_shares(self):
        # The same 9 check samples in 1400 busy samples (heavy: 0.643 %) and in 4200 (light:
        # 0.214 %). In CPU time the two are equal; -normalize scales the new profile to the
        # base's total, which is busy CPU here, so the diff is the change in share: +0.429 pp.
        light = os.path.join(self.dir, "light.pb.gz")
        subprocess.run([ARGS.fixture, "--user-samples", "3200", light], check=True)
        self.assertRegex(pprof("-top", "-focus=^__check_object_size", light),
                         r"accounting for 0.09s, 0.21% of 42.42s total")
        raw = pprof("-top", "-focus=^__check_object_size", "-diff_base=" + light, self.path)
        self.assertRegex(raw, r"accounting for 0, 0% of 42.42s total",
                         "without -normalize pprof compares CPU time, which did not change")
        diff = pprof("-top", "-normalize", "-focus=^__check_object_size", "-diff_base=" + light,
                     self.path)
        self.assertRegex(diff, r"accounting for 0.18s, 0.43% of 42.42s total")
        self.assertRegex(diff, r"(?m)^\s*0.14s\s+0.33%.*\s__check_object_size$")

    def test_tags_split_by_callsite(self):
        out = pprof("-tags", "-tagfocus=callsite=netlink_recvmsg", self.path)
        self.assertRegex(out, r"20.2ms \(\s*100%\): netlink_recvmsg")
        self.assertNotIn("udp_recvmsg", out)


class PprofReadsInlineFrames(unittest.TestCase):
    """The profile as hucprof writes it with the kernel's debuginfo (fixture_profile.h's
    fixture_profile_with_source: Debian 6.1's inline chain at udp_recvmsg's check): pprof must
    show every inlined call as a frame of its own, marked, with its file and line."""

    @classmethod
    def setUpClass(cls):
        cls.dir = tempfile.mkdtemp(prefix="huc-pprof-inline-")
        cls.path = os.path.join(cls.dir, "fixture-source.pb.gz")
        subprocess.run([ARGS.fixture, "--with-source", cls.path], check=True)

    def test_traces_show_the_inlined_copy_chain(self):
        out = pprof("-traces", self.path)
        block = [b for b in out.split("-----------+") if "step:" in b][0]
        frames = re.findall(r"^[ \t]+(?:\S+ms[ \t]+)?(\w[\w.]*( \(inline\))?)[ \t]*$", block, re.M)
        self.assertEqual([f[0] for f in frames],
                         ["__check_object_size", "check_object_size (inline)",
                          "check_copy_size (inline)", "copy_to_iter (inline)",
                          "copy_linear_skb (inline)", "udp_recvmsg", "sock_recvmsg"], block)
        self.assertRegex(block, r"copy:\s+copy_to_iter")

    def test_lines_give_file_and_line_per_inlined_call(self):
        out = pprof("-top", "-lines", "-sample_index=calls", self.path)
        for line in ("copy_to_iter include/linux/uio.h:178 (inline)",
                     "copy_linear_skb include/net/udp.h:377 (inline)",
                     "check_copy_size include/linux/thread_info.h:235 (inline)",
                     "udp_recvmsg net/ipv4/udp.c:1950",
                     "__check_object_size mm/usercopy.c:213"):
            self.assertIn(line, out)

    def test_raw_keeps_one_location_with_five_lines_and_the_offset(self):
        out = pprof("-raw", self.path)
        self.assertRegex(out, r"0xb1d3a4 M=1 check_object_size include/linux/thread_info.h:199 "
                              r"s=0\n\s+check_copy_size include/linux/thread_info.h:235 s=0\n"
                              r"\s+copy_to_iter include/linux/uio.h:178 s=0\n"
                              r"\s+copy_linear_skb include/net/udp.h:377 s=0\n"
                              r"\s+udp_recvmsg net/ipv4/udp.c:1950 s=0")

    def test_tagfocus_on_the_copy(self):
        out = pprof("-tags", "-sample_index=calls", self.path)
        self.assertRegex(out, r"copy: Total 1000(?:\.0)?\s*\n\s*1000(?:\.0)? \(\s*100%\): copy_to_iter")


def main():
    global ARGS
    ARGS, rest = t.script_args("fixture", optional=["pprof"], workdir=False)
    return t.run_unittests(rest, requirements=[
        (ARGS.pprof and os.access(ARGS.pprof, os.X_OK),
         "Google's pprof was not built (needs golang-go and golang-github-google-pprof-dev: "
         "scripts/install-deps.sh)")])


if __name__ == "__main__":
    sys.exit(main())
