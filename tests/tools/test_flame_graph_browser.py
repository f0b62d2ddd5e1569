#!/usr/bin/env python3
"""`hucprof report --flamegraph` renders in a real browser (Debian's headless Chromium), without
JavaScript: Chromium must parse the SVG (an SVG that is not well-formed XML comes back as a
<parsererror>), and the text it holds must name the fixture's frames. No root needed. The
screenshot is kept as a test artifact (flame_graph.png in the work dir)."""

import os
import re
import subprocess
import sys
import unittest

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "lib"))
import headless_chromium as chromium  # noqa: E402
import hucprof_testlib as t  # noqa: E402

ARGS = None


class FlameGraphInChromium(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        profile = os.path.join(ARGS.workdir, "flame_fixture.pb.gz")
        cls.svg_path = os.path.join(ARGS.workdir, "flame_graph.svg")
        subprocess.run([ARGS.fixture, profile], check=True)
        r = subprocess.run([ARGS.hucprof, "report", "--flamegraph", cls.svg_path, profile],
                           capture_output=True, text=True, timeout=60)
        assert r.returncode == 0, r.stderr
        url = "file://" + os.path.abspath(cls.svg_path)
        cls.dom = chromium.dump_dom(url)
        cls.png = os.path.join(ARGS.workdir, "flame_graph.png")
        chromium.screenshot(url, cls.png, 1220, 400)
        print("screenshot:", cls.png, flush=True)

    def test_chromium_parses_the_svg(self):
        self.assertNotIn("parsererror", self.dom)
        self.assertIn("<svg", self.dom)
        self.assertGreater(os.path.getsize(self.png), 5000)

    def test_frames_are_named_in_the_drawn_text(self):
        texts = re.findall(r"<text[^>]*>([^<]*)</text>", self.dom)
        for name in ("all", "udp_recvmsg", "nft_do_chain", "__check_object_size",
                     "netlink_recvmsg", "find_vmap_area", "_raw_spin_lock"):
            self.assertIn(name, texts)
        # The fixture's CPU: 9 samples of 10101010 ns; udp_recvmsg holds 7 of them.
        self.assertIn("udp_recvmsg: 7 samples, 0.071 s CPU (77.78 %)", self.dom)

    def test_no_script_and_no_reference_outside(self):
        self.assertNotIn("<script", self.dom)
        self.assertNotRegex(self.dom, r"(href|src)=")


def main():
    global ARGS
    ARGS, rest = t.script_args("hucprof", "fixture")
    return t.run_unittests(rest, ARGS.workdir, [
        (chromium.find(), "Debian's chromium is not installed (scripts/install-deps.sh)")])


if __name__ == "__main__":
    sys.exit(main())
