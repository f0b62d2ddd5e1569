"""Debian's Chromium, headless, as a real browser for hucprof's pages (stdlib only).

dump_dom(url) returns the DOM after the page loaded (what a browser made of the markup: an SVG
that is not well-formed XML comes back as a <parsererror>); screenshot(url, png) saves what it
drew. Every run gets a fresh profile directory and no network besides the URL."""

import os
import shutil
import subprocess
import tempfile

FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
         "--disable-background-networking", "--disable-component-update", "--disable-sync",
         "--disable-extensions", "--hide-scrollbars"]


def find():
    """Path of the chromium binary, or None."""
    return shutil.which("chromium") or shutil.which("chromium-browser")


def _run(extra, url, timeout):
    with tempfile.TemporaryDirectory(prefix="huc-chromium-") as profile:
        cmd = [find()] + FLAGS + ["--user-data-dir=" + profile] + extra + [url]
        r = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout,
                           env=dict(os.environ, HOME=profile))
    if r.returncode != 0:
        raise RuntimeError("chromium exited with %d: %s" % (r.returncode, r.stderr[-2000:]))
    return r


def dump_dom(url, timeout=120):
    return _run(["--dump-dom"], url, timeout).stdout


def screenshot(url, png_path, width=1280, height=1600, timeout=120):
    _run(["--screenshot=" + png_path, "--window-size=%d,%d" % (width, height)], url, timeout)
    if not os.path.getsize(png_path):
        raise RuntimeError("chromium wrote an empty screenshot")
