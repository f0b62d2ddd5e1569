"""Folded stacks imported by speedscope (Jamie Wong's profile viewer, its npm release) in headless
Chromium, and read back as speedscope itself exports them.

The release's index.html and the folded file are served on 127.0.0.1, loaded as
`index.html#profileURL=...`; speedscope logs which importer it chose, and its Export button saves
the profile it parsed as a speedscope JSON file (frames, and open/close events at cumulative
weights), which `stacks()` turns back into {stack: weight}.

The tarball is the one scripts/install-deps.sh fetched with `npm pack`, pinned by version and
sha512 integrity in tests/tools/speedscope.lock and checked again here before use."""

import base64
import collections
import functools
import hashlib
import http.server
import json
import os
import tarfile
import threading
import urllib.parse

import chromium_devtools

LOCK = os.path.join(os.path.dirname(__file__), "..", "tools", "speedscope.lock")


def pinned():
    """(package spec, sha512 integrity) from speedscope.lock, e.g. ("speedscope@1.25.0", ...)."""
    with open(LOCK) as f:
        spec, integrity = f.read().split()
    return spec, integrity


def tarball(directory):
    """Where scripts/install-deps.sh keeps the pinned tarball in `directory` (test-deps)."""
    return os.path.join(directory, pinned()[0].replace("@", "-") + ".tgz")


def missing_reason(tgz):
    """Why the tarball at `tgz` cannot be used (None when it is the pinned one)."""
    spec, integrity = pinned()
    if not os.path.exists(tgz):
        why = ""
        error = os.path.join(os.path.dirname(tgz), "speedscope.error")
        if os.path.exists(error):
            with open(error) as f:
                why = " (it said: %s)" % f.read().strip()
        build_dir = os.path.dirname(os.path.dirname(os.path.abspath(tgz)))
        return ("no %s tarball at %s: `BUILD_DIR=%s scripts/install-deps.sh` fetches it with "
                "`npm pack` from the npm registry%s" % (spec, tgz, build_dir, why))
    with open(tgz, "rb") as f:
        digest = "sha512-" + base64.b64encode(hashlib.sha512(f.read()).digest()).decode()
    if digest != integrity:
        return "%s is not %s: its sha512 is %s, the lock says %s" % (tgz, spec, digest, integrity)
    return None


def unpack_release(tgz, into):
    """Unpacks the release (dist/release) of the tarball into `into`; returns its directory."""
    with tarfile.open(tgz) as tar:
        members = [m for m in tar.getmembers() if m.name.startswith("package/dist/release/")
                   and m.isfile() and ".." not in m.name.split("/")]
        if hasattr(tarfile, "data_filter"):
            tar.extractall(into, members=members, filter="data")
        else:  # Python before 3.11.4: the members are plain files inside the release already
            tar.extractall(into, members=members)
    return os.path.join(into, "package", "dist", "release")


class _Quiet(http.server.SimpleHTTPRequestHandler):
    def log_message(self, *args):
        pass


def export_of(folded_text, tgz, workdir):
    """speedscope's export (parsed JSON) of `folded_text` imported as a file named
    profile.folded, and the console lines it logged."""
    release = unpack_release(tgz, workdir)
    with open(os.path.join(release, "profile.folded"), "w") as f:
        f.write(folded_text)
    downloads = os.path.join(workdir, "downloads")
    os.makedirs(downloads, exist_ok=True)
    server = http.server.ThreadingHTTPServer(
        ("127.0.0.1", 0), functools.partial(_Quiet, directory=release))
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        url = "http://127.0.0.1:%d/index.html#profileURL=%s" % (
            server.server_address[1], urllib.parse.quote("profile.folded"))
        with chromium_devtools.Browser(download_dir=downloads) as browser:
            page = browser.page(url)
            # The toolbar's Export tab exists once a profile is loaded (the landing page has
            # none); speedscope's document title then names the file.
            export = ("[...document.querySelectorAll('div')].filter(d => d.children.length == 1"
                      " && d.textContent.endsWith('Export'))")
            browser.wait_for(lambda: browser.evaluate(page, export + ".length") == 1,
                             "speedscope showing the imported profile")
            browser.evaluate(page, export + "[0].click()")
            saved = os.path.join(downloads, "profile.speedscope.json")
            browser.wait_for(lambda: browser.call("Browser.getVersion") and any(
                e.get("method") == "Browser.downloadProgress" and
                e["params"]["state"] == "completed" for e in browser.events),
                "the export's download")
            console = browser.console_texts()
        with open(saved) as f:
            return json.load(f), console
    finally:
        server.shutdown()
        server.server_close()


def stacks(export):
    """{"root;...;leaf": weight} of the (one) evented profile in a speedscope export: between two
    events the open frames are the stack, and the weight is how far `at` moved."""
    (profile,) = export["profiles"]
    assert profile["type"] == "evented", profile["type"]
    names = [f["name"] for f in export["shared"]["frames"]]
    out = collections.Counter()
    open_frames, at = [], profile["startValue"]
    for event in profile["events"]:
        if open_frames and event["at"] > at:
            out[";".join(names[i] for i in open_frames)] += event["at"] - at
        at = event["at"]
        if event["type"] == "O":
            open_frames.append(event["frame"])
        else:
            assert open_frames and open_frames[-1] == event["frame"], event
            open_frames.pop()
    assert not open_frames and at == profile["endValue"], (open_frames, at)
    return out
