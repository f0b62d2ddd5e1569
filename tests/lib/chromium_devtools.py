"""Debian's headless Chromium driven through the DevTools protocol (stdlib only).

--remote-debugging-pipe speaks the protocol as NUL-terminated JSON on file descriptors 3 (to the
browser) and 4 (from it), so no WebSocket client is needed. One Browser is one Chromium process
with a fresh profile directory; `page(url)` opens a tab and returns its session for
Runtime.evaluate and the like. Events that arrive while waiting for a reply are kept in `events`
(console messages, downloads) for the caller to read."""

import fcntl
import json
import os
import select
import shutil
import subprocess
import tempfile
import time

import headless_chromium


class Browser:
    def __init__(self, download_dir=None, reply_timeout=120):
        self.reply_timeout = reply_timeout
        self.profile = tempfile.mkdtemp(prefix="huc-chromium-")
        to_browser_r, self._to_browser = os.pipe()
        self._from_browser, from_browser_w = os.pipe()

        def as_fds_3_and_4():
            # Above 4 first, so that neither dup2 overwrites the other pipe's end.
            high = [fcntl.fcntl(fd, fcntl.F_DUPFD, 10) for fd in (to_browser_r, from_browser_w)]
            os.dup2(high[0], 3)
            os.dup2(high[1], 4)

        cmd = [headless_chromium.find()] + headless_chromium.FLAGS + [
            "--user-data-dir=" + self.profile, "--remote-debugging-pipe", "about:blank"]
        # pass_fds: the fds the child keeps after preexec_fn ran (it closes the others).
        self.process = subprocess.Popen(cmd, pass_fds=(3, 4),
                                        preexec_fn=as_fds_3_and_4, stdout=subprocess.DEVNULL,
                                        stderr=subprocess.DEVNULL,
                                        env=dict(os.environ, HOME=self.profile))
        os.close(to_browser_r)
        os.close(from_browser_w)
        self._buffer = b""
        self._last_id = 0
        self.events = []
        if download_dir:
            self.call("Browser.setDownloadBehavior",
                      {"behavior": "allow", "downloadPath": download_dir, "eventsEnabled": True})

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def close(self):
        if self.process.poll() is None:
            self.process.kill()
        self.process.wait()
        os.close(self._to_browser)
        os.close(self._from_browser)
        shutil.rmtree(self.profile, ignore_errors=True)

    def call(self, method, params=None, session=None):
        """The reply's result; an error reply raises RuntimeError."""
        self._last_id += 1
        message = {"id": self._last_id, "method": method, "params": params or {}}
        if session:
            message["sessionId"] = session
        os.write(self._to_browser, json.dumps(message).encode() + b"\0")
        while True:
            reply = self._read()
            if reply.get("id") != self._last_id:
                self.events.append(reply)
            elif "error" in reply:
                raise RuntimeError("%s: %s" % (method, reply["error"]))
            else:
                return reply["result"]

    def page(self, url):
        """A new tab at `url`: its session id, with Runtime events (console) enabled."""
        target = self.call("Target.createTarget", {"url": "about:blank"})["targetId"]
        session = self.call("Target.attachToTarget", {"targetId": target, "flatten": True})
        session = session["sessionId"]
        self.call("Runtime.enable", session=session)
        self.call("Page.navigate", {"url": url}, session=session)
        return session

    def evaluate(self, session, expression):
        """The value of a JavaScript expression in the page; a thrown exception raises."""
        r = self.call("Runtime.evaluate", {"expression": expression, "returnByValue": True},
                      session=session)
        if "exceptionDetails" in r:
            raise RuntimeError("%s: %s" % (expression, r["exceptionDetails"]))
        return r["result"].get("value")

    def wait_for(self, predicate, what, timeout=120):
        """Polls predicate() (which may call the browser) until it is true; RuntimeError naming
        `what` after `timeout` seconds: a page that never gets there fails, it does not hang."""
        deadline = time.monotonic() + timeout
        while not predicate():
            if time.monotonic() > deadline:
                raise RuntimeError("chromium: %s did not happen in %d s" % (what, timeout))
            time.sleep(0.2)

    def console_texts(self):
        """The string arguments of every console message the pages logged so far."""
        return [" ".join(str(a.get("value", "")) for a in e["params"]["args"])
                for e in self.events if e.get("method") == "Runtime.consoleAPICalled"]

    def _read(self):
        while b"\0" not in self._buffer:
            ready, _, _ = select.select([self._from_browser], [], [], self.reply_timeout)
            if not ready:
                raise RuntimeError("chromium sent nothing for %d s" % self.reply_timeout)
            chunk = os.read(self._from_browser, 1 << 16)
            if not chunk:
                raise RuntimeError("chromium closed the DevTools pipe (exit %s)" %
                                   self.process.poll())
            self._buffer += chunk
        message, self._buffer = self._buffer.split(b"\0", 1)
        return json.loads(message)
