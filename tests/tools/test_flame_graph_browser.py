#!/usr/bin/env python3
"""`hucprof report --flamegraph` renders in a real browser (Debian's headless Chromium), without
JavaScript: Chromium must parse the SVG (an SVG that is not well-formed XML comes back as a
<parsererror>), and the text it holds must name the fixture's frames. No root needed. The
screenshot is kept as a test artifact (flame_graph.png in the work dir). A profile of hostile
names (issue 37) is drawn too, and its web page (GET /, by huc_web_view_page) read by Python's
HTML parser and Chromium. The fixture's page, as Chromium shows it, gives each call site's share
with its samples and the 95 % interval Wilson's formula gives here."""

import html.parser
import os
import re
import subprocess
import sys
import unittest

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "lib"))
import headless_chromium as chromium  # noqa: E402
import hucprof_testlib as t  # noqa: E402
import dom_tables  # noqa: E402
import pprof_files  # noqa: E402
import text_checks  # noqa: E402
from wilson_interval import wilson  # noqa: E402

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
        # The fixture's CPU: 9 samples of 10101010 ns; udp_recvmsg holds 7 of them, and the
        # tooltip says what its percentage is of, and its interval (Wilson's at 1.5, computed
        # here: 38.79-95.08 %).
        lower, upper = (100 * x for x in wilson(7, 9))
        self.assertIn("udp_recvmsg: 7 samples, 0.071 s CPU (77.78 % of the checks' samples; "
                      "95 % interval {:.2f}-{:.2f} %)".format(lower, upper), self.dom)

    def test_no_script_and_no_reference_outside(self):
        self.assertNotIn("<script", self.dom)
        self.assertNotRegex(self.dom, r"(href|src)=")


class Markup(html.parser.HTMLParser):
    """The start tags and the text of an HTML page, as Python's parser reads them."""

    def __init__(self, page):
        super().__init__(convert_charrefs=True)
        self.tags, self.text = [], []
        self.feed(page)
        self.close()

    def handle_starttag(self, tag, attrs):
        self.tags.append(tag)

    def handle_data(self, data):
        self.text.append(data)


class NamesFromOutsideInChromium(unittest.TestCase):
    """Issue 37, D6: a profile whose names hold a terminal title sequence, NUL, a C1 control, a
    noncharacter and markup (tests/lib/pprof_files.py HOSTILE) draws as a well-formed SVG and
    serves as a UTF-8 page with each name shown escaped, as text, in Chromium too."""

    @classmethod
    def setUpClass(cls):
        profile = os.path.join(ARGS.workdir, "hostile.pb.gz")
        with open(profile, "wb") as f:
            f.write(pprof_files.gzipped(pprof_files.hostile_profile()))
        cls.svg_path = os.path.join(ARGS.workdir, "hostile.svg")
        r = subprocess.run([ARGS.hucprof, "report", "--flamegraph", cls.svg_path, profile],
                           capture_output=True, text=True, timeout=60)
        assert r.returncode == 0, r.stderr
        cls.svg_dom = chromium.dump_dom("file://" + os.path.abspath(cls.svg_path))
        page = subprocess.run([ARGS.web_view_page, profile], capture_output=True, timeout=60)
        assert page.returncode == 0, page.stderr
        cls.head, cls.body = page.stdout.split(b"\n\n", 1)
        cls.page_path = os.path.join(ARGS.workdir, "hostile.html")
        with open(cls.page_path, "wb") as f:
            f.write(cls.body)
        cls.page_dom = chromium.dump_dom("file://" + os.path.abspath(cls.page_path))

    def test_chromium_parses_the_svg_and_names_every_frame(self):
        self.assertNotIn("parsererror", self.svg_dom)
        for name in ("title", "csi", "nonchar"):
            self.assertIn(pprof_files.SHOWN[name] + ":", self.svg_dom)
        self.assertIn("&lt;script&gt;alert(1)&lt;/script&gt;&amp;amp;", self.svg_dom)
        self.assertNotIn("<script", self.svg_dom)

    def test_the_page_is_utf8_html_with_the_names_as_text(self):
        self.assertEqual(self.head, b"Content-Type: text/html; charset=utf-8")
        self.assertEqual(text_checks.bad_characters(self.body), [])
        markup = Markup(self.body.decode("utf-8"))
        self.assertNotIn("script", markup.tags)
        text = "".join(markup.text)
        for name in ("title", "csi", "nonchar"):
            self.assertIn(pprof_files.SHOWN[name], text)
        self.assertIn(pprof_files.HOSTILE["markup"], text, "markup shown as text")

    def test_chromium_shows_the_page_with_the_names_and_its_flame_graph(self):
        self.assertNotIn("parsererror", self.page_dom)
        self.assertNotIn("<script", self.page_dom)
        self.assertIn("<code>%s</code>" % pprof_files.SHOWN["title"], self.page_dom)
        self.assertIn(pprof_files.SHOWN["csi"], self.page_dom)
        self.assertIn("<svg", self.page_dom)


class WebViewSharesInChromium(unittest.TestCase):
    """The page's call-site shares as Chromium shows them: each with its own samples, its
    interval in the cell's hover text equal to Wilson's computed here (a page without a snapshot's
    drains takes the least design effect, 1.5, and says so), the ± its larger side, and the
    steps' samples adding up to the call site's."""

    @classmethod
    def setUpClass(cls):
        profile = os.path.join(ARGS.workdir, "web_fixture.pb.gz")
        subprocess.run([ARGS.fixture, profile], check=True)
        page = subprocess.run([ARGS.web_view_page, profile], capture_output=True, timeout=60)
        assert page.returncode == 0, page.stderr
        path = os.path.join(ARGS.workdir, "web_fixture.html")
        with open(path, "wb") as f:
            f.write(page.stdout.split(b"\n\n", 1)[1])
        cls.dom = chromium.dump_dom("file://" + os.path.abspath(path))

    def test_each_share_has_its_samples_and_the_interval_computed_here(self):
        busy = re.search(r"([\d,]+) of ([\d,]+) busy samples", self.dom)
        self.assertTrue(busy, self.dom[:3000])
        n = int(busy.group(2).replace(",", ""))
        texts = dom_tables.tables(self.dom)["callsites"][1:]  # under the header row
        titles = dom_tables.titles(self.dom)["callsites"][1:]
        self.assertEqual(len(texts), 2, texts)  # the fixture's udp_recvmsg and netlink_recvmsg
        for row, row_titles in zip(texts, titles):
            share, samples, title = row[0], row[1], row_titles[0]
            k = int(samples.replace(",", ""))
            m = re.fullmatch(r"95 % interval (\d+\.\d\d)-(\d+\.\d\d) %, design effect 1\.50 "
                             r"\(the least: /metrics names no drains of this call site\)", title)
            self.assertTrue(m, title)
            lower, upper = (100 * x for x in wilson(k, n))
            self.assertAlmostEqual(float(m.group(1)), lower, delta=0.005 + 1e-9)
            self.assertAlmostEqual(float(m.group(2)), upper, delta=0.005 + 1e-9)
            pm = re.fullmatch(r"(\d+\.\d+) % ±(\d+\.\d+)", share)
            self.assertTrue(pm, share)
            p = 100 * k / n
            self.assertAlmostEqual(float(pm.group(1)), p, delta=0.005 + 1e-9)
            self.assertAlmostEqual(float(pm.group(2)), max(upper - p, p - lower), delta=0.01)
            steps = row[-1]
            counts = [int(c) for c in re.findall(r"\((\d+)\)", steps)]
            self.assertTrue(counts, steps)
            self.assertEqual(sum(counts), k, steps)


def main():
    global ARGS
    ARGS, rest = t.script_args("hucprof", "fixture", "web-view-page")
    return t.run_unittests(rest, ARGS.workdir, [
        (chromium.find(), "Debian's chromium is not installed (scripts/install-deps.sh)")])


if __name__ == "__main__":
    sys.exit(main())
