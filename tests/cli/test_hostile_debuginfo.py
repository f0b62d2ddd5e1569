#!/usr/bin/env python3
"""`hucprof doctor` against hostile debuginfo sources, the real binary (issue 37): a FIFO at
every place the search looks (it hung start-up in open(2) for ever), a debuginfod server that
stays silent, trickles 300 B/s or offers 5 GiB (it held doctor past 200 s), a debuginfod cache
that is a file, a FIFO, a link loop or cannot be made (reported as "no server gave build-id").
Each doctor returns within a bound, names the problem in its Debuginfo section, and stays small.
No root needed: kallsyms is a test file (--kallsyms). The debuginfod cases need the running
kernel's build-id (/sys/kernel/notes) and libdebuginfod; without them they say so and skip.
"""

import ctypes.util
import os
import resource
import subprocess
import sys
import tempfile
import time
import unittest

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "lib"))
import debuginfo_fixtures as fx  # noqa: E402
import hucprof_testlib  # noqa: E402

ARGS = None
RELEASE = os.uname().release
# doctor with a test kallsyms peaks near 20 MiB; what a hang or a blow-up would cost is far above.
MAX_RSS_MIB = 64
# Wall seconds before doctor is taken for hung and killed: a failure of its own.
HANG_SECONDS = 60
KALLSYMS = "\n".join("%016x %s %s" % (0xffffffff81000000 + i * 0x100, kind, name) for i, (kind, name)
                     in enumerate([("T", "_stext"), ("T", "__check_object_size"),
                                   ("T", "udp_recvmsg"), ("T", "_copy_to_iter"),
                                   ("T", "_etext")])) + "\n"


def doctor(words, env=None):
    """(exit code, stdout, wall seconds, peak RSS MiB) of hucprof doctor WORDS."""
    with tempfile.TemporaryFile() as out:
        started = time.monotonic()
        proc = subprocess.Popen([ARGS.hucprof, "doctor", "--kallsyms", ARGS.kallsyms] + words,
                                stdout=out, stderr=subprocess.DEVNULL, stdin=subprocess.DEVNULL,
                                env=env)
        while True:
            pid, status, usage = os.wait4(proc.pid, os.WNOHANG)
            if pid:
                break
            if time.monotonic() - started > HANG_SECONDS:
                proc.kill()
                os.wait4(proc.pid, 0)
                raise AssertionError("doctor %s: still running after %d s, killed" %
                                     (" ".join(words), HANG_SECONDS))
            time.sleep(0.05)
        seconds = time.monotonic() - started
        proc.returncode = os.waitstatus_to_exitcode(status)
        out.seek(0)
        return (proc.returncode, out.read().decode("utf-8"), seconds,
                usage.ru_maxrss / 1024)


def debuginfo_section(stdout):
    return stdout[stdout.index("\nDebuginfo"):stdout.index("\nverdict")]


class Fifos(unittest.TestCase):
    def assert_named(self, words, path, env=None):
        rc, out, seconds, rss = doctor(words, env)
        print("%-70.70s rc %d, %.1f s, %.0f MiB" % (" ".join(words), rc, seconds, rss), flush=True)
        self.assertIn(rc, (0, 1), out)  # the verdict: this host can run it, or cannot
        self.assertIn("looked at %s: cannot be read: not a regular file" % path,
                      debuginfo_section(out))
        self.assertLess(rss, MAX_RSS_MIB)

    def test_a_fifo_given_as_the_file(self):
        with tempfile.TemporaryDirectory(prefix="hucprof-fifo-") as tmp:
            fifo = fx.make_fifo(os.path.join(tmp, "vmlinux"))
            self.assert_named(["--debuginfo.path", fifo], fifo)
            config = os.path.join(tmp, "hucprof.yaml")
            with open(config, "w") as f:
                f.write("debuginfo:\n  path: %s\n" % fifo)
            self.assert_named(["--config", config], fifo)

    def test_a_fifo_at_every_place_of_a_directory(self):
        build_id = fx.running_build_id() or "00" * 20
        for place in fx.candidate_paths(RELEASE, build_id):
            if ".build-id" in place and not fx.running_build_id():
                continue  # looked for only by the running kernel's build-id
            with self.subTest(place=place), \
                    tempfile.TemporaryDirectory(prefix="hucprof-fifo-") as tmp:
                fifo = fx.make_fifo(os.path.join(tmp, place))
                self.assert_named(["--debuginfo.path", tmp], fifo)


class Debuginfod(unittest.TestCase):
    def setUp(self):
        if not fx.running_build_id():
            self.skipTest("the running kernel's build-id is unreadable (/sys/kernel/notes): "
                          "debuginfod is not asked without it")
        if not ctypes.util.find_library("debuginfod"):
            self.skipTest("libdebuginfod.so.1 is not installed (Debian: libdebuginfod1)")
        self.tmp = tempfile.TemporaryDirectory(prefix="hucprof-debuginfod-")
        self.empty = os.path.join(self.tmp.name, "empty")
        os.mkdir(self.empty)

    def tearDown(self):
        self.tmp.cleanup()

    def ask(self, url, **env):
        environment = dict(os.environ, DEBUGINFOD_URLS=url,
                           DEBUGINFOD_CACHE_PATH=os.path.join(self.tmp.name, "cache"))
        for name in ("DEBUGINFOD_MAXTIME", "DEBUGINFOD_TIMEOUT", "DEBUGINFOD_MAXSIZE"):
            environment.pop(name, None)
        environment.update(env)
        rc, out, seconds, rss = doctor(["--debuginfo.path", self.empty, "--debuginfo.debuginfod"],
                                       environment)
        line = [l.strip() for l in debuginfo_section(out).splitlines()
                if l.strip().startswith("debuginfod: ")]
        print("%-20s %s: rc %d, %.1f s, %.0f MiB: %s" % (url[-20:], env, rc, seconds, rss, line),
              flush=True)
        self.assertIn(rc, (0, 1), out)
        self.assertLess(rss, MAX_RSS_MIB)
        self.assertEqual(len(line), 1, out)
        return line[0], seconds

    def test_a_silent_server_is_given_up_after_the_stall_window(self):
        with fx.FakeDebuginfod("silent") as server:
            line, seconds = self.ask(server.url, DEBUGINFOD_TIMEOUT="3")
        self.assertTrue(line.startswith("debuginfod: vmlinux: gave up: 0 bytes arrived in 3 s, "
                                        "less than the 100 KiB"), line)
        self.assertGreaterEqual(seconds, 3)

    def test_a_trickling_server_is_given_up_at_the_deadline(self):
        with fx.FakeDebuginfod("trickle") as server:
            line, seconds = self.ask(server.url, DEBUGINFOD_MAXTIME="4")
        self.assertEqual(line, "debuginfod: vmlinux: gave up after 4 s, the deadline of a "
                               "download (DEBUGINFOD_MAXTIME sets it)")
        self.assertGreaterEqual(seconds, 4)

    def test_a_file_larger_than_the_bound_is_refused_when_offered(self):
        with fx.FakeDebuginfod("huge") as server:
            line, _ = self.ask(server.url)
        self.assertEqual(line, "debuginfod: vmlinux: the server offers 5120 MiB, more than the "
                               "4096 MiB hucprof takes (DEBUGINFOD_MAXSIZE lowers it)")

    def test_a_cache_that_cannot_be_one_is_named(self):
        cache = os.path.join(self.tmp.name, "cache")
        cases = [("fifo", lambda: os.mkfifo(cache), "is a FIFO, not a directory"),
                 ("file", lambda: open(cache, "w").close(), "is a regular file, not a directory"),
                 ("loop", lambda: os.symlink(cache, cache), "Too many levels of symbolic links"),
                 ("no parent", None, "cannot be made: %s/missing: No such file or directory"
                  % self.tmp.name)]
        with fx.FakeDebuginfod("silent") as server:
            for name, make, expected in cases:
                with self.subTest(cache=name):
                    path = cache if make else os.path.join(self.tmp.name, "missing", "cache")
                    if make:
                        make()
                    line, seconds = self.ask(server.url, DEBUGINFOD_CACHE_PATH=path)
                    self.assertTrue(line.startswith(
                        "debuginfod: vmlinux: the debuginfod cache %s (from "
                        "DEBUGINFOD_CACHE_PATH)" % path), line)
                    self.assertIn(expected, line)
                    if make:
                        os.unlink(cache)
            self.assertEqual(server.requests, 0, "no server is asked for a download with no home")


def main():
    global ARGS
    ARGS, rest = hucprof_testlib.script_args("hucprof", workdir=True)
    os.makedirs(ARGS.workdir, exist_ok=True)
    ARGS.kallsyms = os.path.join(ARGS.workdir, "kallsyms")
    with open(ARGS.kallsyms, "w") as f:
        f.write(KALLSYMS)
    resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
    return hucprof_testlib.run_unittests(rest, ARGS.workdir)


if __name__ == "__main__":
    sys.exit(main())
