#!/usr/bin/env python3
"""Host tier, `hucprof top --from URL` against a real daemon (sampling) during a UDP flood, used
as a person would: in a real terminal (tmux: keys sent with send-keys, the screen read back with
capture-pane), and on a pipe.

References written by no one here: tmux is the terminal (what it shows, its size, whether the
alternate screen is still on, and stty's view of the tty modes before and after); the daemon's
own /metrics, read by the Prometheus project's parser, bounds every count top prints; the flood
is the ground truth of what ran (udp_recvmsg)."""

import os
import re
import shlex
import shutil
import socket
import subprocess
import sys
import tempfile
import time
import unittest

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "lib"))
import hucprof_testlib as t  # noqa: E402

ARGS = None
FLOOD_SECONDS = 300  # bounded; outlives the tests on a loaded machine
WAIT = 60  # generous bound of every wait for the screen: a blow-up, not a speed goal
STAMP = re.compile(r"\d{4}-\d\d-\d\d \d\d:\d\d:\d\d UTC")
ESCAPE = "\x1b"


def wait_for(what, predicate, timeout=WAIT):
    """predicate()'s first true value, polled; AssertionError naming `what` after timeout."""
    deadline = time.monotonic() + timeout
    last = None
    while time.monotonic() < deadline:
        last = predicate()
        if last:
            return last
        time.sleep(0.2)
    raise AssertionError("%s: not within %d s" % (what, timeout))


class Tmux:
    """A tmux server of its own (its socket in a temp dir), one window running `command`."""

    def __init__(self, workdir, command, width, height):
        self.socket = os.path.join(workdir, "tmux.sock")
        self._run("new-session", "-d", "-s", "top", "-x", str(width), "-y", str(height),
                  "sh", "-c", command)
        self._run("set-option", "-t", "top", "remain-on-exit", "on")

    def _run(self, *args):
        return subprocess.run(["tmux", "-f", "/dev/null", "-S", self.socket] + list(args),
                              capture_output=True, text=True, timeout=30, check=True).stdout

    def screen(self):
        return self._run("capture-pane", "-p", "-t", "top").split("\n")

    def send(self, *keys):
        self._run("send-keys", "-t", "top", *keys)

    def resize(self, width, height):
        self._run("resize-window", "-t", "top", "-x", str(width), "-y", str(height))

    def alternate_screen_on(self):
        return self._run("display-message", "-p", "-t", "top", "#{alternate_on}").strip() == "1"

    def kill(self):
        subprocess.run(["tmux", "-S", self.socket, "kill-server"], capture_output=True,
                       timeout=30)


def parse_tables(text):
    """top's plain output → a list of tables: {"title", "busy": (kernel, user, idle), "k",
    "columns", "rows": [dict by column name]}. Raises AssertionError where it is not that."""
    tables = []
    for block in text.split("\n\n"):
        if not block.strip():
            continue
        lines = block.split("\n")
        table = {"title": lines[0]}
        busy = re.search(r"^busy CPU in the last [0-9.]+ s: [0-9,]+ samples \(kernel ([0-9,]+), "
                         r"user ([0-9,]+); idle ([0-9,]+) left out\), ([0-9.]+) cores", lines[1])
        assert busy, "no busy line in %r" % block
        table["busy"] = tuple(int(g.replace(",", "")) for g in busy.groups()[:3])
        table["cores"] = float(busy.group(4))
        k = re.search(r"(?:collecting: ([0-9,]+) samples? in the checks"
                      r"|: ([0-9,]+) of [0-9,]+ busy samples)", lines[2])
        assert k, "no headline in %r" % block
        table["k"] = int((k.group(1) or k.group(2)).replace(",", ""))
        table["rows"] = []
        header = next((i for i, line in enumerate(lines) if line.lstrip().startswith("share")),
                      None)
        if header is not None:
            columns = re.split(r"  +", lines[header].strip())
            table["columns"] = columns
            for line in lines[header + 1:]:
                cells = re.split(r"  +", line.strip(), maxsplit=len(columns) - 1)
                assert len(cells) == len(columns), "row %r vs columns %r" % (line, columns)
                table["rows"].append(dict(zip(columns, cells)))
        else:
            assert "no call site counted" in block, block
        tables.append(table)
    return tables


def serves(url):
    try:
        return t.http_get(url, timeout=1)[0] == 200
    except OSError:
        return False


def percent(text):
    return 0.0 if text.startswith("<") else float(text)


class TopAgainstADaemon(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        # Drains every 2 s while top reads every 0.5 s on the pipe: as a daemon (10 s) and top
        # (1 s) are by default, readings between drains.
        cls.daemon = t.Daemon.started(ARGS.hucprof, ["--mode", "sample", "--interval", "2s",
                                                     "--sample-frequency", "499"],
                                      os.path.join(ARGS.workdir, "top_daemon.log"))
        cls.flood = subprocess.Popen([ARGS.flood, "--seconds", str(FLOOD_SECONDS),
                                      "--payload", "64"], stdout=subprocess.DEVNULL)
        # udp_recvmsg on the daemon's page before anything is asked of top.
        wait_for("udp_recvmsg on /metrics", lambda: t.select(
            t.parse_metrics(cls.daemon.scrape()), "usercopy_cpu_samples_total",
            callsite="udp_recvmsg"))

    @classmethod
    def tearDownClass(cls):
        if cls.flood.poll() is None:
            cls.flood.terminate()
            cls.flood.wait(timeout=30)
        cls.daemon.stop()

    def counters(self):
        samples = t.parse_metrics(self.daemon.scrape())
        by_site = {}
        for labels, value in t.select(samples, "usercopy_cpu_samples_total"):
            key = (labels["callsite"], labels["syscall"])
            by_site[key] = by_site.get(key, 0) + value
        busy = sum(t.total(samples, "usercopy_sampled_cpu_samples_total", context=c)
                   for c in ("kernel", "user"))
        return by_site, busy

    def test_in_a_terminal_refreshes_resizes_and_quits_with_the_terminal_restored(self):
        workdir = tempfile.mkdtemp(dir=ARGS.workdir, prefix="top_tmux_")
        before, after, status = (os.path.join(workdir, n) for n in ("before", "after", "status"))
        top = " ".join(shlex.quote(a) for a in [ARGS.hucprof, "top", "--from", self.daemon.url()])
        command = ("stty -g > {b}; {top} 2> {log}; echo $? > {s}.tmp; stty -g > {a}; "
                   "mv {s}.tmp {s}; sleep 600").format(
                       b=before, a=after, s=status, top=top, log=os.path.join(workdir, "stderr"))
        tmux = Tmux(workdir, command, 120, 30)
        try:
            screen = wait_for("the table with udp_recvmsg", lambda: (
                lambda s: s if any("udp_recvmsg" in line for line in s) else None)(tmux.screen()))
            self.assertTrue(tmux.alternate_screen_on())
            self.assertTrue(screen[0].startswith("hucprof top  " + self.daemon.url()), screen)
            header = [line for line in screen if "call site" in line]
            self.assertEqual(len(header), 1, screen)
            for column in ("share", "95 % interval", "samples", "call site", "syscall"):
                self.assertIn(column, header[0])
            row = next(line for line in screen if "udp_recvmsg" in line)
            self.assertRegex(row, r"(\d+\.\d+ %|collecting) +[<0-9.]+–[0-9.]+ % +[0-9,]+  "
                                  r"udp_recvmsg +recvfrom")
            self.assertTrue(any(line.startswith("q quit") for line in screen), screen)
            self.assertNotIn(ESCAPE, "\n".join(screen))

            # Refreshes: the reading's time on the title line moves on.
            first = STAMP.search(screen[0]).group(0)
            wait_for("a refresh", lambda: (lambda m: m and m.group(0) != first)(
                STAMP.search(tmux.screen()[0])))

            # Resized to 60x12: every line fits the new width (the title is cut with "…"), the
            # screen is no taller, and the keys' line is still there.
            tmux.resize(60, 12)
            small = wait_for("the screen redrawn at 60 columns", lambda: (
                lambda s: s if s[0].endswith("…") else None)(tmux.screen()))
            self.assertLessEqual(len([line for line in small if line.strip()]), 12)
            for line in small:
                self.assertLessEqual(len(line), 60, small)
            self.assertTrue(any(line.startswith("q quit") for line in small), small)

            # q quits with status 0, off the alternate screen, the tty's modes as they were.
            tmux.send("q")
            wait_for("top's exit status", lambda: os.path.exists(status))
            with open(status) as f:
                self.assertEqual(f.read().strip(), "0")
            self.assertFalse(tmux.alternate_screen_on())
            with open(before) as b, open(after) as a:
                self.assertEqual(b.read(), a.read())
            with open(os.path.join(workdir, "stderr")) as f:
                self.assertNotIn(ESCAPE, f.read())
        finally:
            tmux.kill()

    def test_on_a_pipe_one_plain_table_per_interval_bounded_by_the_daemons_counters(self):
        sites_before, busy_before = self.counters()
        r = subprocess.run([ARGS.hucprof, "top", "--from", self.daemon.url(), "-n", "4",
                            "-d", "0.5"],
                           stdin=subprocess.DEVNULL, capture_output=True, text=True, timeout=120)
        sites_after, busy_after = self.counters()
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertNotIn(ESCAPE, r.stdout)
        tables = parse_tables(r.stdout)
        self.assertEqual(len(tables), 4, r.stdout)

        seen = {}
        busy_seen = 0
        for table in tables:
            self.assertTrue(table["title"].startswith("hucprof top  " + self.daemon.url()))
            kernel, user, _ = table["busy"]
            busy = kernel + user
            busy_seen += busy
            # An interval runs from one of the daemon's drains to another, never between two:
            # busy samples in each (the flood runs), and no more cores than the machine has (a
            # span is measured at top's readings: within a reading of the drains' 2 s).
            self.assertGreater(busy, 0, table)
            self.assertLessEqual(table["cores"], (os.cpu_count() or 1) * 2.5 / 1.5, table)
            self.assertEqual(sum(int(row["samples"].replace(",", "")) for row in table["rows"]),
                             table["k"])
            for row in table["rows"]:
                n = int(row["samples"].replace(",", ""))
                key = (row["call site"], row["syscall"])
                seen[key] = seen.get(key, 0) + n
                low, high = (percent(x) for x in
                             row["95 % interval"].removesuffix(" %").split("–"))
                share = 100.0 * n / busy
                # The interval holds the share (both printed rounded to 2-3 digits).
                self.assertLessEqual(low, share * 1.05 + 0.01, row)
                self.assertGreaterEqual(high, share * 0.95 - 0.01, row)
                if row["share"] != "collecting":
                    self.assertAlmostEqual(percent(row["share"].removesuffix(" %")), share,
                                           delta=max(0.01, share * 0.05))
        # The intervals are consecutive increases of the daemon's counters: together no more
        # than they went up while top ran.
        self.assertGreater(busy_seen, 0)
        self.assertLessEqual(busy_seen, busy_after - busy_before)
        for key, n in seen.items():
            self.assertLessEqual(n, sites_after.get(key, 0) - sites_before.get(key, 0), key)
        self.assertIn("udp_recvmsg", {site for site, _ in seen}, r.stdout)


class TopRefusesWhatItCannotRead(unittest.TestCase):
    def top(self, *args):
        r = subprocess.run([ARGS.hucprof, "top"] + list(args) + ["-n", "1"],
                           stdin=subprocess.DEVNULL, capture_output=True, text=True, timeout=60)
        lines = r.stderr.strip().split("\n")
        self.assertEqual(len(lines), 1, r.stderr)
        self.assertEqual(r.stdout, "")
        return r.returncode, lines[0]

    def test_bad_urls_are_one_line_and_exit_2(self):
        for url, words in [("ftp://127.0.0.1:1/", '"ftp" is not http or https'),
                           ("127.0.0.1:9478", "is not a URL"),
                           ("http://me:secret@127.0.0.1:1/", "password in the URL"),
                           ("http://127.0.0.1:0/", "port 0")]:
            code, line = self.top("--from", url)
            self.assertEqual(code, 2, line)
            self.assertTrue(line.startswith("--from: "), line)
            self.assertIn(words, line)

    def test_a_closed_port_is_an_error_not_a_hang(self):
        port = t.free_port()
        code, line = self.top("--from", "http://127.0.0.1:%d" % port)
        self.assertEqual(code, 1)
        self.assertIn("GET http://127.0.0.1:%d/metrics: connection refused" % port, line)

    def test_a_daemon_that_never_answers_is_an_error_not_a_hang(self):
        # Connected (the kernel completes the handshake into the backlog), never answered.
        with socket.socket() as listener:
            listener.bind(("127.0.0.1", 0))
            listener.listen(4)
            url = "http://127.0.0.1:%d" % listener.getsockname()[1]
            code, line = self.top("--from", url)
        self.assertEqual(code, 1)
        self.assertIn("GET %s/metrics: no answer within" % url, line)

    def test_a_page_of_no_hucprof_daemon_is_exit_2(self):
        workdir = tempfile.mkdtemp(dir=ARGS.workdir, prefix="top_page_")
        with open(os.path.join(workdir, "metrics"), "w") as f:
            f.write("# TYPE node_load1 gauge\nnode_load1 0.5\n")
        port = t.free_port()
        server = subprocess.Popen([sys.executable, "-m", "http.server", "--bind", "127.0.0.1",
                                   "--directory", workdir, str(port)],
                                  stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        try:
            wait_for("python's http.server", lambda: serves("http://127.0.0.1:%d/metrics" % port))
            code, line = self.top("--from", "http://127.0.0.1:%d" % port)
        finally:
            server.terminate()
            server.wait(timeout=30)
        self.assertEqual(code, 2, line)
        self.assertIn("no hucprof counters", line)


def main():
    global ARGS
    ARGS, rest = t.script_args("hucprof", "flood")
    return t.run_unittests(rest, ARGS.workdir, [
        (t.is_root(), "top: needs root (the daemon attaches BPF programs)"),
        (shutil.which("tmux") is not None, "top: tmux is not installed (scripts/install-deps.sh)"),
    ])


if __name__ == "__main__":
    sys.exit(main())
