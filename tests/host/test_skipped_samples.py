#!/usr/bin/env python3
"""Host tier: the samples the kernel skips the sampler program for, counted by hucprof, against
the kernel's own counts.

No kernel counts a skipped perf_event program run. Its reference here is what the kernel counts
around it: every cpu-clock event of the daemon, read by this test from the daemon's own
descriptors (pidfd_getfd), owes one run per period of its count (each CPU's own), and the
program's run_cnt (bpftool, with kernel.bpf_stats_enabled=1 from before the daemon starts) says
how many it got.
hucprof_dropped_total{reason="samples_skipped"} must lie between that reference taken before
hucprof's last settled drain and the one taken after the scrape, within one run per CPU at each
end (a period whose run is under way). Quiet, and then while a process pinned to CPU 0 copies a
64 KiB BPF map value in a loop (map_syscall_loop.py), which holds bpf_prog_active there: the
count must rise. The sysctl is put back as it was found."""

import ctypes
import json
import os
import subprocess
import sys
import time
import unittest

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "lib"))
import hucprof_testlib as t  # noqa: E402

ARGS = None
SYSCTL = t.BPF_STATS_SYSCTL
FREQUENCY = 1000
NOMINAL_NS = 10**9 // FREQUENCY  # the kernel's hrtimer period (perf_swevent_init_hrtimer)


def period_ns(index):
    """The period hucprof opens its index-th CPU's event with (docs/design.md, "Each CPU's clock
    at its own period"): the nominal one moved by -1, +1, -3, +3, ... half steps of 1/4096 of it,
    over 8 CPUs in turn. The kernel shows an event's period nowhere, so this is the design's
    rule; the events are taken in the order they were opened (their descriptors'). Which event is
    which CPU hardly matters: the CPUs' counts differ by microseconds."""
    k = index % 8
    return NOMINAL_NS + (k // 2 * 2 + 1) * (-1 if k % 2 == 0 else 1) * (NOMINAL_NS // 4096)
NR_PIDFD_GETFD = 438
HAMMER = os.path.join(os.path.dirname(os.path.abspath(__file__)), "map_syscall_loop.py")

libc = ctypes.CDLL(None, use_errno=True)
libc.syscall.restype = ctypes.c_long


def perf_event_counts(pid):
    """The count of every perf event pid holds, read through a copy of its descriptor."""
    counts = []
    pidfd = os.pidfd_open(pid)
    try:
        for fd in sorted(os.listdir("/proc/%d/fd" % pid), key=int):
            try:
                if os.readlink("/proc/%d/fd/%s" % (pid, fd)) != "anon_inode:[perf_event]":
                    continue
            except OSError:
                continue
            mine = libc.syscall(NR_PIDFD_GETFD, pidfd, int(fd), 0)
            if mine < 0:
                raise OSError(ctypes.get_errno(), "pidfd_getfd(%s)" % fd)
            try:
                counts.append(int.from_bytes(os.read(mine, 8), sys.byteorder))
            finally:
                os.close(mine)
    finally:
        os.close(pidfd)
    return counts


def program_id(prog_ids, name):
    for prog_id in prog_ids:
        info = json.loads(subprocess.run(["bpftool", "-j", "prog", "show", "id", str(prog_id)],
                                         check=True, capture_output=True, text=True).stdout)
        if info["name"] == name:
            return prog_id
    raise AssertionError("the daemon holds no program named %s" % name)


def program_fdinfo(pid, prog_id):
    """The kernel's fdinfo of the daemon's descriptor of program prog_id (run_cnt,
    recursion_misses, ...): read in microseconds, unlike a bpftool run, so it can be taken right
    beside the events' counts."""
    for fd in os.listdir("/proc/%d/fdinfo" % pid):
        try:
            with open("/proc/%d/fdinfo/%s" % (pid, fd)) as f:
                fields = dict(line.split(":", 1) for line in f if ":" in line)
        except OSError:
            continue
        if fields.get("prog_id", "").strip() == str(prog_id):
            return {k: v.strip() for k, v in fields.items()}
    raise AssertionError("the daemon holds no descriptor of program %d" % prog_id)


class SkippedSamplesTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.original = t.read_bpf_stats()
        # Before the daemon: run_cnt counts only while this is on.
        t.write_bpf_stats("1")
        try:
            cls.daemon = t.Daemon.started(ARGS.hucprof, [
                "--mode", "sample", "--interval", "1s", "--sample-frequency", str(FREQUENCY)],
                os.path.join(ARGS.workdir, "skipped_samples.log"))
        except BaseException:
            t.write_bpf_stats(cls.original)
            raise
        cls.prog_id = program_id(t.held_bpf_ids(cls.daemon.proc.pid, "prog"), "huc_sample")

    @classmethod
    def tearDownClass(cls):
        cls.daemon.stop()
        t.write_bpf_stats(cls.original)

    def kernel_skips(self):
        """The samples skipped so far by the kernel's counts: (at least, at most, owed, ran
        before, recursion_misses). The runs are read just before and just after the counts."""
        pid = self.daemon.proc.pid
        before = program_fdinfo(pid, self.prog_id)
        counts = perf_event_counts(pid)
        after = program_fdinfo(pid, self.prog_id)
        owed = sum(c // period_ns(i) for i, c in enumerate(counts))
        ran_before, ran_after = int(before["run_cnt"]), int(after["run_cnt"])
        return (owed - ran_after, owed - ran_before, owed, ran_before,
                int(after.get("recursion_misses", "0")))

    def drains(self):
        return t.total(t.parse_metrics(self.daemon.scrape()), "hucprof_drains_total")

    def wait_drains(self, n):
        """Until the daemon has done n more drains (however long a loaded machine takes)."""
        start = self.drains()
        while self.drains() < start + n:
            time.sleep(0.2)

    def served_between(self, what):
        """hucprof's count, with the kernel's before its last settled drain and after the scrape."""
        early = self.kernel_skips()
        # A skip is counted once two drains agree on it: three more drains cover `early`.
        self.wait_drains(3)
        metrics = t.parse_metrics(self.daemon.scrape())
        late = self.kernel_skips()
        if t.read_bpf_stats() != "1":
            self.fail("kernel.bpf_stats_enabled was changed by another process during the test")
        served = t.total(metrics, "hucprof_dropped_total", reason="samples_skipped")
        cpus = len(perf_event_counts(self.daemon.proc.pid))
        print("%s: kernel >= %d (owed %d, ran %d) <= hucprof %d <= kernel <= %d (owed %d, ran "
              "%d), %d CPUs; the kernel's recursion_misses: %d"
              % (what, early[0], early[2], early[3], served, late[1], late[2], late[3], cpus,
                 late[4]), flush=True)
        # One period per CPU either side: a run under way while its period's count was read.
        self.assertLessEqual(early[0] - cpus, served)
        self.assertLessEqual(served, late[1] + cpus)
        info = t.select(metrics, "hucprof_missed_runs_info", what="samples")
        self.assertEqual([labels["counted"] for labels, _ in info], ["yes"], info)
        return served, late

    def test_skips_counted_as_the_kernel_owed_them(self):
        with open("/sys/devices/system/cpu/online") as f:
            online = sum(int(b) - int(a) + 1 for a, _, b in
                         (r.partition("-") if "-" in r else (r, "-", r)
                          for r in f.read().strip().split(",")))
        self.assertEqual(len(perf_event_counts(self.daemon.proc.pid)), online,
                         "the daemon holds one cpu-clock event per online CPU")
        quiet, quiet_kernel = self.served_between("quiet")
        hammer = subprocess.run([sys.executable, HAMMER, "0", "8"], check=True,
                                capture_output=True, text=True)
        print("map lookups on CPU 0: %s" % hammer.stdout.strip(), flush=True)
        provoked, provoked_kernel = self.served_between("bpf() map lookups on CPU 0")
        # The lookups made the kernel skip samples, and hucprof counted them.
        self.assertGreaterEqual(provoked_kernel[0] - quiet_kernel[1], 50)
        self.assertGreaterEqual(provoked - quiet, 50)


def main():
    global ARGS
    ARGS, rest = t.script_args("hucprof")
    bpftool = subprocess.run(["sh", "-c", "command -v bpftool"], capture_output=True)
    return t.run_unittests(rest, ARGS.workdir, [
        (t.is_root(), "skipped samples: needs root (BPF, perf_event_open, pidfd_getfd, the "
         "bpf_stats sysctl)"),
        t.has_btf("skipped samples"),
        (os.path.exists(SYSCTL), "skipped samples: this kernel has no %s" % SYSCTL),
        (bpftool.returncode == 0,
         "skipped samples: bpftool is not installed (scripts/install-deps.sh installs it)"),
    ])


if __name__ == "__main__":
    sys.exit(main())
