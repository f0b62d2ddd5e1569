#!/usr/bin/env python3
"""Host tier, task labels: `hucprof record -- sh -c '…'` of two processes in one recording, one
doing 3 units of UDP work and the other 1 (huc_udp_pairs copied under two names, the first longer
than the kernel's 15-character comm). References nobody here wrote: the kernel's comm of each
process (/proc/PID/comm, read while it runs), its pid as the shell that started it says ($!), the
work itself (3 : 1 exact counts of the same calls), and Google's pprof reading the profile
(`pprof -raw`: the comm and pid labels of every sample in the checks). `hucprof report --sort
comm` and `--sort comm,pid` rank the heavier process first.
"""

import os
import shutil
import subprocess
import sys
import tempfile
import time
import unittest

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "lib"))
import hucprof_testlib as t  # noqa: E402
import pprof_raw  # noqa: E402

ARGS = None
PAIRS = 300000  # one unit of work
HEAVY = "hucprof-task-labels-heavy"  # 25 characters: the kernel keeps 15
LIGHT = "light-pairs"


def kernel_comm(pid, deadline):
    """/proc/PID/comm once the process has exec'd (a forked shell is `sh` until then)."""
    while time.monotonic() < deadline:
        with open("/proc/%d/comm" % pid) as f:
            comm = f.read().rstrip("\n")
        if comm not in ("sh", "dash", "bash"):
            return comm
        time.sleep(0.01)
    raise AssertionError("process %d never exec'd" % pid)


class TaskLabels(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.dir = tempfile.mkdtemp(prefix="huc-task-labels-", dir=ARGS.workdir)
        for name in (HEAVY, LIGHT):
            shutil.copy(ARGS.pairs, os.path.join(cls.dir, name))
        pids_file = os.path.join(cls.dir, "pids")
        script = ('"$1/%s" %d 64 >/dev/null & a=$!; "$1/%s" %d 64 >/dev/null & b=$!; '
                  'echo "$a $b" > "$1/pids.tmp"; mv "$1/pids.tmp" "$1/pids"; wait $a && wait $b'
                  % (HEAVY, 3 * PAIRS, LIGHT, PAIRS))
        cls.profile = os.path.join(cls.dir, "tasks.pb.gz")
        proc = subprocess.Popen([ARGS.hucprof, "record", "--mode", "sample", "--sample-frequency",
                                 "999", "-o", cls.profile, "--", "sh", "-c", script, "sh",
                                 cls.dir], stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                                text=True)
        deadline = time.monotonic() + 120
        try:
            while not os.path.exists(pids_file):
                assert proc.poll() is None, "record ended before the command started: " + \
                    proc.stdout.read()
                assert time.monotonic() < deadline, "the command never started"
                time.sleep(0.05)
            with open(pids_file) as f:
                cls.pids = [int(p) for p in f.read().split()]
            cls.comms = [kernel_comm(p, deadline) for p in cls.pids]
            cls.log = proc.communicate(timeout=240)[0]
        finally:
            if proc.poll() is None:
                proc.kill()
                proc.wait()
        assert proc.returncode == 0, cls.log
        print("heavy: pid %d comm %r; light: pid %d comm %r" % (
            cls.pids[0], cls.comms[0], cls.pids[1], cls.comms[1]), flush=True)
        types, samples = pprof_raw.read(ARGS.pprof, cls.profile)
        i = types.index("samples/count")
        cls.by_task = {}  # (comm, pid label) -> samples in the checks
        for s in samples:
            if "context" not in s.labels:  # the rest of busy CPU has one; checks do not
                key = (s.labels.get("comm"), s.labels.get("pid"))
                cls.by_task[key] = cls.by_task.get(key, 0) + s.values[i]
        print("samples in the checks by (comm, pid), as pprof -raw reads them: %s" % cls.by_task,
              flush=True)

    def report(self, *args):
        r = subprocess.run([ARGS.hucprof, "report", self.profile] + list(args),
                           capture_output=True, text=True, timeout=60)
        self.assertEqual(r.returncode, 0, r.stderr)
        return r.stdout

    def first_row(self, text, keys):
        """The key cells of the first row of `report --sort KEYS`."""
        lines = text.splitlines()
        header = next(i for i, l in enumerate(lines) if l.startswith("the checks by " + keys))
        return lines[header + 2].split()[-len(keys.split(",")):]

    def test_the_kernel_truncates_the_long_name(self):
        self.assertEqual(self.comms[0], HEAVY[:15])
        self.assertEqual(self.comms[1], LIGHT)

    def test_samples_carry_each_processes_comm_and_pid(self):
        heavy = self.by_task.get((self.comms[0], str(self.pids[0])), 0)
        light = self.by_task.get((self.comms[1], str(self.pids[1])), 0)
        total = sum(self.by_task.values())
        self.assertGreater(light, 10, self.by_task)
        # Every sample in the checks carries a comm and a pid; all but the shell's are the two's.
        self.assertNotIn(None, [c for c, _ in self.by_task], self.by_task)
        self.assertNotIn(None, [p for _, p in self.by_task], self.by_task)
        self.assertGreaterEqual(heavy + light, 0.95 * total, self.by_task)
        # 3 : 1 of the same calls: the heavy one has more, whatever the scheduler does.
        self.assertGreater(heavy, light, self.by_task)

    def test_report_sorts_by_comm(self):
        text = self.report("--sort", "comm")
        print(text, flush=True)
        self.assertIn("(share: of busy CPU", text)
        self.assertEqual(self.first_row(text, "comm"), [self.comms[0]])
        self.assertIn(self.comms[1], text)

    def test_report_sorts_by_comm_and_pid(self):
        text = self.report("--sort", "comm,pid")
        self.assertEqual(self.first_row(text, "comm,pid"), [self.comms[0], str(self.pids[0])])


def main():
    global ARGS
    ARGS, rest = t.script_args("hucprof", "pairs", optional=["pprof"])
    return t.run_unittests(rest, ARGS.workdir, [
        (t.is_root(), "task labels: needs root (BPF, perf_event_open)"),
        t.has_btf("task labels"),
        (ARGS.pprof and os.access(ARGS.pprof, os.X_OK),
         "task labels: Google's pprof was not built (scripts/install-deps.sh)"),
    ])


if __name__ == "__main__":
    sys.exit(main())
