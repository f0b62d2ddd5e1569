#!/usr/bin/env python3
"""`hucprof record -p PID` and `record -C CPUS` on this machine (sampling mode): what they follow is
all the recording holds, as `perf record -p`/`-C` would.

Two loads at once: a UDP loop (huc_udp_pairs: sendto/recvfrom, each with its usercopy checks) and
a competitor doing the same over write()/read() (Python's os.write/os.read on a connected UDP
socket pair). Each check sample carries the syscall its task was in (the kernel's syscall number
from the task's registers), so whose a check sample is can be told apart without trusting
hucprof's own labels of who ran it: sendto/recvfrom are the loop's, write/read the competitor's.

- `record -p LOOP`: only sendto/recvfrom in the checks, no write/read; and the checks' share
  of the loop's busy CPU agrees with `perf record -p LOOP` over the same window, classified by
  tests/lib/perf_stacks.py's rule on perf's own stacks, within counting error (as
  test_interrupts.py compares the whole machine).
- `record -C 1` with the loop pinned to CPU 0 and the competitor to CPU 1 (taskset): only the
  competitor's checks, and the busy CPU is at most one CPU's (the whole machine's two would be
  twice that).
- `record -a` of the same two loads holds both kinds: the two tests above could fail.
- `record -p LOOP --duration 30s` and `perf record -p LOOP` (no end of its own) of a loop that
  exits 2 s into both recordings: both stop soon after it, not 30 s later, hucprof saying why,
  and each file holds the loop's samples.
"""

import os
import shutil
import subprocess
import sys
import tempfile
import time
import unittest

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "lib"))
sys.path.insert(0, os.path.dirname(__file__))
import hucprof_testlib as t  # noqa: E402
import perf_stacks as ps  # noqa: E402
import pprof_raw  # noqa: E402
from hucprof_testlib import within_counting_error  # noqa: E402

WINDOW = 10  # seconds each recording lasts
LOOP_SYSCALLS = {"sendto", "recvfrom"}
COMPETITOR_SYSCALLS = {"write", "read"}
COMPETITOR = """
import os, socket
a, b = socket.socket(socket.AF_INET, socket.SOCK_DGRAM), socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
a.bind(("127.0.0.1", 0))
b.bind(("127.0.0.1", 0))
a.connect(b.getsockname())
while True:
    os.write(a.fileno(), b"x" * 64)
    os.read(b.fileno(), 64)
"""
ARGS = None


def start_loads(loop_cpu=None, competitor_cpu=None):
    def pinned(cpu, argv):
        return (["taskset", "-c", str(cpu)] if cpu is not None else []) + argv
    loop = subprocess.Popen(pinned(loop_cpu, [ARGS.pairs, "1000000000", "64"]),
                            stdout=subprocess.DEVNULL)
    competitor = subprocess.Popen(pinned(competitor_cpu, [sys.executable, "-c", COMPETITOR]))
    time.sleep(1)  # both running
    return loop, competitor


def stop_loads(*procs):
    for p in procs:
        p.kill()
        p.wait()


def record(options, out, wait_for=None):
    """`hucprof record --mode sample OPTIONS` for WINDOW seconds; with `wait_for`, a function
    called once hucprof says it records (to start perf on the same window)."""
    proc = subprocess.Popen([ARGS.hucprof, "record", "--mode", "sample", "--sample-frequency",
                             "499", "--duration", "%ds" % WINDOW, "-o", out] + options,
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    head, other = [], None
    for line in proc.stdout:
        head.append(line)
        if "recording for" in line:
            break
    if wait_for:
        other = wait_for()
    log = "".join(head) + proc.communicate(timeout=120)[0]
    assert proc.returncode == 0, log
    return log, other


def check_samples_by_syscall(path):
    """Samples in the checks by their syscall label, and all busy samples (pprof -raw)."""
    types, samples = pprof_raw.read(ARGS.pprof, path)
    i = types.index("samples/count")
    checks, busy = {}, 0
    for s in samples:
        busy += s.values[i]
        if "context" not in s.labels:
            name = s.labels.get("syscall", "")
            checks[name] = checks.get(name, 0) + s.values[i]
    return checks, busy


class FollowedProcess(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.dir = tempfile.mkdtemp(prefix="huc-target-p-", dir=ARGS.workdir)
        cls.profile = os.path.join(cls.dir, "p.pb.gz")
        perf_data = os.path.join(cls.dir, "perf.data")
        loop, competitor = start_loads()
        try:
            def perf():
                # Another frequency than hucprof's: the two timers do not lock to each other.
                return subprocess.run([ARGS.perf, "record", "-q", *ps.PERF_CLOCK, "-g", "-F",
                                       "497", "-p", str(loop.pid), "-o", perf_data, "--",
                                       "sleep", str(WINDOW)], capture_output=True, text=True)
            cls.log, perf_run = record(["-p", str(loop.pid)], cls.profile, perf)
        finally:
            stop_loads(loop, competitor)
        assert perf_run.returncode == 0, perf_run.stderr
        cls.pid = loop.pid
        cls.checks, cls.busy = check_samples_by_syscall(cls.profile)
        symbols = ps.KernelSymbols()
        cls.perf = {"check": 0, "interrupt_in_check": 0, "outside": 0, "user": 0, "idle": 0}
        for pid, frames in ps.perf_kernel_stacks(perf_data, ARGS.perf):
            kind = "idle" if pid == 0 else "user" if not frames else ps.classify(frames, symbols)
            cls.perf[kind] += 1
        print("record -p: checks by syscall %s of %d busy; perf -p: %s" % (
            cls.checks, cls.busy, cls.perf), flush=True)

    def test_only_the_process_checks_are_recorded(self):
        self.assertGreater(sum(self.checks.values()), 10, self.checks)
        self.assertEqual(set(self.checks) - LOOP_SYSCALLS, set(), self.checks)

    def test_share_of_its_busy_cpu_matches_perf_p(self):
        checks = sum(self.checks.values())
        perf_busy = sum(v for k, v in self.perf.items() if k != "idle")
        ok, ph, pp, se = within_counting_error(checks, self.busy, self.perf["check"], perf_busy,
                                               spread=0.05)
        print("checks' share of PID's busy CPU: hucprof %.2f %% (%d of %d), perf -p %.2f %% "
              "(%d of %d), se %.2f pp" % (100 * ph, checks, self.busy, 100 * pp,
                                          self.perf["check"], perf_busy, 100 * se), flush=True)
        self.assertTrue(ok)

    def test_the_report_says_whose_busy_cpu_it_is(self):
        report = subprocess.run([ARGS.hucprof, "report", self.profile], capture_output=True,
                                text=True)
        self.assertEqual(report.returncode, 0, report.stderr)
        self.assertIn("busy CPU of: PID %d\n" % self.pid, report.stdout)


def perf_events_open(pid):
    """Whether process `pid` holds a perf event (perf record has attached), by its descriptors."""
    try:
        fds = os.listdir("/proc/%d/fd" % pid)
    except OSError:
        return False
    for fd in fds:
        try:
            if os.readlink("/proc/%d/fd/%s" % (pid, fd)) == "anon_inode:[perf_event]":
                return True
        except OSError:
            pass
    return False


class ExitingProcess(unittest.TestCase):
    LIMIT = 20  # seconds: a blow-up guard (the recordings are for 30 s), not a timing test

    def test_record_p_stops_when_the_process_exits_as_perf_does(self):
        d = tempfile.mkdtemp(prefix="huc-target-exit-", dir=ARGS.workdir)
        out, perf_data = os.path.join(d, "exit.pb.gz"), os.path.join(d, "perf.data")
        loop = subprocess.Popen([ARGS.pairs, "1000000000", "64"], stdout=subprocess.DEVNULL)
        recorders = []
        try:
            hucprof = subprocess.Popen(
                [ARGS.hucprof, "record", "--mode", "sample", "--sample-frequency", "499",
                 "--duration", "30s", "-o", out, "-p", str(loop.pid)],
                stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
            recorders.append(hucprof)
            head = []
            for line in hucprof.stdout:
                head.append(line)
                if "recording for" in line:
                    break
            self.assertIsNone(hucprof.poll(), "".join(head))
            perf = subprocess.Popen([ARGS.perf, "record", "-q", *ps.PERF_CLOCK, "-g", "-F",
                                     "497", "-p", str(loop.pid), "-o", perf_data],
                                    stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
            recorders.append(perf)
            attach_deadline = time.monotonic() + 60
            while not perf_events_open(perf.pid) and perf.poll() is None:
                self.assertLess(time.monotonic(), attach_deadline, "perf record never attached")
                time.sleep(0.05)
            time.sleep(2)
            # Not reaped until both have stopped: the exit is what ends a recording, as for perf.
            loop.terminate()
            exited = time.monotonic()
            stopped = {}
            while len(stopped) < 2 and time.monotonic() < exited + 60:
                for name, proc in (("hucprof", hucprof), ("perf", perf)):
                    if name not in stopped and proc.poll() is not None:
                        stopped[name] = time.monotonic() - exited
                time.sleep(0.05)
            log = "".join(head) + hucprof.communicate(timeout=60)[0]
            perf_err = perf.communicate(timeout=60)[1]
        finally:
            for proc in recorders + [loop]:
                if proc.poll() is None:
                    proc.kill()
                proc.wait()
        print("a followed process exited: hucprof record -p stopped %s s after, perf record -p "
              "%s s after" % (stopped.get("hucprof", "> 60"), stopped.get("perf", "> 60")),
              flush=True)
        self.assertEqual(hucprof.returncode, 0, log)
        self.assertLess(stopped.get("hucprof", float("inf")), self.LIMIT, log)
        self.assertIn("PID %d exited: stopping the recording" % loop.pid, log)
        self.assertEqual(perf.returncode, 0, perf_err)
        self.assertLess(stopped.get("perf", float("inf")), self.LIMIT, perf_err)

        checks, busy = check_samples_by_syscall(out)
        print("record -p of the exiting loop: checks by syscall %s of %d busy" % (checks, busy),
              flush=True)
        # Over the 2 s or more it ran (fewer checks than above: a shorter window).
        self.assertGreater(busy, 100)
        self.assertGreater(sum(checks.get(s, 0) for s in LOOP_SYSCALLS), 5, checks)
        self.assertEqual(set(checks) - LOOP_SYSCALLS, set(), checks)
        perf_samples = sum(1 for pid, _ in ps.perf_kernel_stacks(perf_data, ARGS.perf)
                           if pid == loop.pid)
        self.assertGreater(perf_samples, 10)


class FollowedCpu(unittest.TestCase):
    def test_only_that_cpus_samples_are_recorded(self):
        out = os.path.join(tempfile.mkdtemp(prefix="huc-target-c-", dir=ARGS.workdir), "c.pb.gz")
        loop, competitor = start_loads(loop_cpu=0, competitor_cpu=1)
        try:
            record(["-C", "1"], out)
        finally:
            stop_loads(loop, competitor)
        checks, busy = check_samples_by_syscall(out)
        print("record -C 1: checks by syscall %s, %d busy samples (%.2f cores)" % (
            checks, busy, busy / 499 / WINDOW), flush=True)
        self.assertGreater(sum(checks.get(s, 0) for s in COMPETITOR_SYSCALLS), 10, checks)
        self.assertEqual(set(checks) & LOOP_SYSCALLS, set(), checks)
        # One CPU sampled at 499 Hz for WINDOW seconds: at most that many busy samples (+5 %
        # for the timer's jitter), where both CPUs' would be about twice as many.
        self.assertLessEqual(busy, 1.05 * 499 * WINDOW)


class WholeMachine(unittest.TestCase):
    def test_both_loads_are_in_a_whole_machine_recording(self):
        out = os.path.join(tempfile.mkdtemp(prefix="huc-target-a-", dir=ARGS.workdir), "a.pb.gz")
        loop, competitor = start_loads(loop_cpu=0, competitor_cpu=1)
        try:
            record(["-a"], out)
        finally:
            stop_loads(loop, competitor)
        checks, busy = check_samples_by_syscall(out)
        print("record -a: checks by syscall %s, %d busy" % (checks, busy), flush=True)
        self.assertGreater(sum(checks.get(s, 0) for s in COMPETITOR_SYSCALLS), 10, checks)
        self.assertGreater(sum(checks.get(s, 0) for s in LOOP_SYSCALLS), 10, checks)


def main():
    global ARGS
    ARGS, rest = t.script_args("hucprof", "pairs", optional=["pprof", "perf"])
    ARGS.perf = ARGS.perf if ARGS.perf and not ARGS.perf.endswith("NOTFOUND") else "perf"
    return t.run_unittests(rest, ARGS.workdir, [
        (t.is_root(), "record targets: needs root (BPF, perf_event_open)"),
        t.has_btf("record targets"),
        (shutil.which(ARGS.perf), "record targets: perf is not installed (scripts/install-deps.sh)"),
        (shutil.which("taskset"), "record targets: taskset is not installed (util-linux)"),
        (ARGS.pprof and os.access(ARGS.pprof, os.X_OK),
         "record targets: Google's pprof was not built (scripts/install-deps.sh)"),
        (os.path.exists("/sys/devices/system/cpu/cpu1"), "record targets: needs two CPUs"),
    ])


if __name__ == "__main__":
    sys.exit(main())
