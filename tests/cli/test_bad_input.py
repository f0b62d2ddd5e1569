#!/usr/bin/env python3
"""Bad input against the real binary: every usage or configuration error exits 2 with exactly
one line on stderr, nothing on stdout, in bounded time and memory (peak RSS from the kernel's
wait4 rusage). The hostile config files are those of issue 9: on b022eb4 nested aliases grew
the daemon to 2.7 GB and aborted (rc 134), /dev/zero aborted at 2.1 GB and a FIFO blocked
forever. No root needed: all of this fails before anything touches the kernel.
"""

import argparse
import os
import resource
import subprocess
import sys
import tempfile
import time
import unittest

ARGS = None
MAX_RSS_MIB = 64     # hucprof parsing a config peaks near 10 MiB; 2.7 GB was the defect
MAX_SECONDS = 10
ADDRESS_SPACE = 2 << 30  # a defect hits this and aborts rather than taking the machine's memory


def limit_memory():
    resource.setrlimit(resource.RLIMIT_AS, (ADDRESS_SPACE, ADDRESS_SPACE))


def run(words, stdin=subprocess.DEVNULL):
    """(exit code, stdout, stderr, peak RSS in MiB, seconds) of hucprof WORDS."""
    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
        started = time.monotonic()
        proc = subprocess.Popen([ARGS.hucprof] + words, stdout=out, stderr=err, stdin=stdin,
                                preexec_fn=limit_memory)
        deadline = started + MAX_SECONDS * 3
        while True:
            pid, status, usage = os.wait4(proc.pid, os.WNOHANG)
            if pid:
                break
            if time.monotonic() > deadline:
                proc.kill()
                pid, status, usage = os.wait4(proc.pid, 0)
                break
            time.sleep(0.02)
        seconds = time.monotonic() - started
        proc.returncode = os.waitstatus_to_exitcode(status)
        out.seek(0)
        err.seek(0)
        return (proc.returncode, out.read().decode(errors="replace"),
                err.read().decode(errors="replace"), usage.ru_maxrss / 1024, seconds)


class BadInput(unittest.TestCase):
    def assert_usage_error(self, words, expected_in_message):
        rc, out, err, rss, seconds = run(words)
        print("%-60.60s rc %d, %.0f MiB, %.2f s: %s" % (" ".join(words), rc, rss, seconds,
                                                        err.strip()[:100]), flush=True)
        self.assertEqual(rc, 2, err)
        self.assertEqual(out, "", "printed on stdout")
        self.assertTrue(err.endswith("\n") and err.count("\n") == 1, "not one line: %r" % err)
        self.assertIn(expected_in_message, err)
        self.assertLess(rss, MAX_RSS_MIB)
        self.assertLess(seconds, MAX_SECONDS)

    def test_hostile_config_files(self):
        tmp = tempfile.mkdtemp(prefix="hucprof-bad-config-")
        laughs = os.path.join(tmp, "laughs.yaml")
        with open(laughs, "w") as f:  # 9 levels of 10 aliased mappings: 10^9 settings
            f.write("a0: &a0 {%s}\n" % ", ".join("k%d: lol" % i for i in range(10)))
            for level in range(1, 10):
                f.write("a%d: &a%d {%s}\n" % (level, level, ", ".join(
                    "k%d: *a%d" % (i, level - 1) for i in range(10))))
        big = os.path.join(tmp, "big.yaml")
        with open(big, "w") as f:
            f.write("# " + "x" * (2 << 20) + "\n")
        deep = os.path.join(tmp, "deep.yaml")
        with open(deep, "w") as f:
            f.write("a: " + "[" * 100000 + "]" * 100000 + "\n")
        binary = os.path.join(tmp, "binary.yaml")
        with open(binary, "wb") as f:
            f.write(bytes(range(256)) * 64)
        many = os.path.join(tmp, "many.yaml")
        with open(many, "w") as f:
            f.write("list:\n" + "  - x\n" * 50000)
        fifo = os.path.join(tmp, "fifo.yaml")
        os.mkfifo(fifo)
        cases = [
            (laughs, "anchors (&name) are not allowed here"),
            ("/dev/zero", "not a regular file"),
            (fifo, "not a regular file"),
            (big, "larger than 1048576 bytes"),
            (deep, "nested more than 64 levels deep"),
            (binary, "binary.yaml:"),
            (many, "more than 10000 YAML nodes"),
            (tmp, "is a directory"),
            (os.path.join(tmp, "missing.yaml"), "no such file or directory"),
        ]
        for path, expected in cases:
            with self.subTest(path=path):
                self.assert_usage_error(["run", "--config", path], expected)

    def test_usage_errors(self):
        cases = [
            (["run", "--no-such-flag"], "unknown flag --no-such-flag"),
            (["run", "--mode"], "--mode: missing value"),
            (["run", "--sample-frequency", "0"], "--sample-frequency: 0 is out of range"),
            (["run", "--interval", "10"], "--interval: \"10\" has no unit"),
            (["run", "--log.format", "xml"], "--log.format: \"xml\" is not one of text, logfmt, json"),
            (["run", "--log.level", "trace"], "--log.level: \"trace\" is not one of"),
            (["run", "--capabilities.keep", "cap_sys_admn"], "--capabilities.keep: \"cap_sys_admn\""),
            (["frobnicate"], "unknown command \"frobnicate\""),
            ([], "missing command"),
        ]
        for words, expected in cases:
            with self.subTest(words=words):
                self.assert_usage_error(words, expected)

    def test_help_goes_to_stdout_with_exit_0(self):
        rc, out, err, _, _ = run(["run", "--help"])
        self.assertEqual(rc, 0)
        self.assertEqual(err, "")
        for flag in ("--log.format", "--capabilities.keep"):
            self.assertIn(flag, out)


def main():
    global ARGS
    p = argparse.ArgumentParser()
    p.add_argument("--hucprof", required=True)
    ARGS, rest = p.parse_known_args()
    prog = unittest.main(argv=[sys.argv[0]] + rest, exit=False, verbosity=2)
    return 0 if prog.result.wasSuccessful() else 1


if __name__ == "__main__":
    sys.exit(main())
