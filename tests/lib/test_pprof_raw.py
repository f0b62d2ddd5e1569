#!/usr/bin/env python3
"""pprof_raw.py reads what Google's pprof prints with -raw, inline frames included.

Two profiles: the one hucprof's writer makes with the kernel's debuginfo (huc_profile_fixture
--with-source: a location holding a chain of inlined functions, files and lines), checked against
pprof's own -traces of it, which prints every function of every location too; and one encoded
here by hand from proto/profile.proto with what hucprof never writes but a parser must survive:
function ids out of order and shared between locations, names with spaces, an empty file name,
a location without lines, a folded one, a system name of its own. (pprof numbers locations anew,
and refuses a line without a function, which it would print "??".)"""

import os
import re
import subprocess
import sys
import tempfile
import unittest

sys.path.insert(0, os.path.dirname(__file__))
import hucprof_testlib as t  # noqa: E402
import pprof_files as pf  # noqa: E402
import pprof_raw  # noqa: E402

ARGS = None


def traces(path):
    """pprof -traces (internal/report printTraces): per sample, "%10s:  %s" lines of its labels,
    then "%10s   %s" lines of its functions, leaf first, the value in the first one's column,
    " (inline)" after an inlined function. Returns [[function, ...]]."""
    out = subprocess.run([ARGS.pprof, "-traces", path], capture_output=True, text=True,
                         check=True, timeout=60).stdout
    stacks = []
    for block in out.split("-" * 11 + "+" + "-" * 55)[1:]:
        names = []
        for line in block.splitlines():
            if not line.strip() or (not names and re.match(r"^ *[\w.]+:  ", line)):
                continue
            m = re.match(r"^ *[^ ]* {3}([^ ].*?)(?: \(inline\))?$", line)
            if not m:
                raise AssertionError("pprof -traces: a line not understood: %r" % line)
            names.append(m.group(1))
        if names:
            stacks.append(names)
    return stacks


class FixtureWithSource(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.dir = tempfile.mkdtemp(prefix="huc-pprof-raw-", dir=ARGS.workdir)
        cls.path = os.path.join(cls.dir, "with-source.pb.gz")
        subprocess.run([ARGS.fixture, "--with-source", cls.path], check=True)
        cls.types, cls.samples = pprof_raw.read(ARGS.pprof, cls.path)

    def test_the_inlined_chain_is_every_function_of_the_call_sites_location(self):
        udp = [s for s in self.samples if "udp_recvmsg" in s.names]
        self.assertTrue(udp, [s.names for s in self.samples])
        for s in udp:
            at = s.names.index("__check_object_size")
            self.assertEqual(s.names[at:at + 6],
                             ["__check_object_size", "check_object_size", "check_copy_size",
                              "copy_to_iter", "copy_linear_skb", "udp_recvmsg"])
            # One address per location: the inlined functions share udp_recvmsg's.
            addresses = [a for a, _ in s.frames[at + 1:at + 6]]
            self.assertIsNotNone(addresses[0])
            self.assertEqual(addresses[1:], [None] * 4)
            self.assertEqual(s.lines[at + 1], ("check_object_size",
                                               "include/linux/thread_info.h", 199))

    def test_every_sample_has_the_functions_pprof_traces_prints(self):
        # -traces merges samples of the same stack and labels; compare the sets of stacks.
        from_traces = sorted({tuple(names) for names in traces(self.path)})
        from_raw = sorted({tuple(s.names) for s in self.samples})
        self.assertEqual(from_raw, from_traces)


def hand_made_profile():
    """The profile of the module docstring, and the frames each of its samples must read as."""
    s = pf.Strings()
    number, field, packed = pf.number, pf.field, pf.packed
    out = [field(1, number(1, s("samples")) + number(2, s("count")))]
    out.append(field(3, number(1, 1) + number(5, s("[kernel.kallsyms]")) + number(7, 1) +
                     number(8, 1) + number(9, 1) + number(10, 1)))
    functions = {  # id: (name, system name, file)
        7: ("leaf_function", "leaf_function", "mm/usercopy.c"),
        3: ("inlined helper", "inlined helper", ""),
        11: ("[user CPU]", "[user CPU]", ""),
        5: ("outer", "outer.cold", "net/ipv4/udp.c"),
    }
    for fid, (name, system, filename) in functions.items():
        out.append(field(5, number(1, fid) + number(2, s(name)) + number(3, s(system)) +
                         number(4, s(filename)) + number(5, 0)))

    def location(lid, address, lines, folded=False):
        body = number(1, lid) + number(2, 1) + number(3, address)
        for fid, line in lines:
            body += field(4, number(1, fid) + number(2, line))
        if folded:
            body += number(5, 1)
        out.append(field(4, body))
    location(2, 0x1000, [(7, 213)])
    location(1234567, 0x2000, [(3, 17), (5, 1201)], folded=True)  # helper inlined into outer
    location(9, 0x3000, [])
    location(4, 0x4000, [(11, 0), (5, 1300)])
    sample_frames = {
        (2, 1234567, 9): ["leaf_function", "inlined helper", "outer", ""],
        (4, 1234567): ["[user CPU]", "outer", "inlined helper", "outer"],
    }
    for i, ids in enumerate(sample_frames):
        out.append(field(2, packed(1, list(ids)) + packed(2, [i + 1])))
    return b"".join(out) + s.encoded(), sample_frames


class HandMadeProfile(unittest.TestCase):
    def test_each_sample_reads_as_the_functions_encoded(self):
        data, expected = hand_made_profile()
        path = os.path.join(tempfile.mkdtemp(prefix="huc-pprof-raw-", dir=ARGS.workdir),
                            "hand.pb.gz")
        with open(path, "wb") as f:
            f.write(pf.gzipped(data))
        types, samples = pprof_raw.read(ARGS.pprof, path)
        self.assertEqual(types, ["samples/count"])
        got = {s.values[0]: s.names for s in samples}
        self.assertEqual(got, {i + 1: names for i, names in enumerate(expected.values())})
        by_value = {s.values[0]: s for s in samples}
        self.assertEqual(by_value[1].lines[2], ("outer", "net/ipv4/udp.c", 1201))
        self.assertEqual(by_value[1].frames[:3], [(0x1000, "leaf_function"),
                                                  (0x2000, "inlined helper"), (None, "outer")])

    def test_a_sample_of_a_location_pprof_does_not_list_is_an_error_in_words(self):
        text = "Samples:\nsamples/count\n          1: 1 2 \nLocations\n     1: 0x10 f :0 s=0\n"
        with self.assertRaisesRegex(ValueError, "location 2"):
            pprof_raw.parse(text)


def main():
    global ARGS
    ARGS, rest = t.script_args("pprof", "fixture")
    return t.run_unittests(rest, ARGS.workdir, [
        (ARGS.pprof and os.access(ARGS.pprof, os.X_OK),
         "pprof_raw: Google's pprof was not built (scripts/install-deps.sh)"),
    ])


if __name__ == "__main__":
    sys.exit(main())
