#!/usr/bin/env python3
"""Host tier, which workload pays: two cgroups made here under the unified hierarchy run the same
UDP workload side by side, 3 units of work in one and 1 in the other (four processes of exactly
N loopback send/recv pairs each, huc_udp_pairs, three of them in the first), while hucprof
samples.

References nobody here wrote: the work itself (each pair runs the same checks, so the checks' CPU
splits 3 : 1 whatever the scheduler does; perf 6.1's --all-cgroups resolves no cgroup on this
hybrid host), the kernel's own CPU accounting of each cgroup (cpu.stat usage_usec) for each
workload's busy CPU, and Google's pprof reading the profile's workload labels. The same with 30
cgroups that live 1-2 s each and are gone before the drain at the default --interval: each keeps
its name (`[unknown]` at most 1 % of the checks' CPU). Then 500 short-lived cgroups: the
workload series stay bounded by --top-k and the kernel map is drained.
`record -- COMMAND` removes its cgroup, also when COMMAND leaves a process running (which
runs on, back in the recorder's cgroup by /proc/PID/cgroup) or the recording is stopped by
SIGTERM; the test looks at its own recorder's cgroup only, whatever others left.
"""

import os
import re
import signal
import subprocess
import sys
import tempfile
import time
import types
import unittest
import urllib.request

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "lib"))
import hucprof_testlib as t  # noqa: E402
import pprof_raw  # noqa: E402

ARGS = None
PAIRS = 400000  # one unit of work: ~2.7 s of one core on the development machine
FREQUENCY = 999
CHECKS = "usercopy_workload_cpu_seconds_total"
BUSY = "usercopy_workload_busy_cpu_seconds_total"


def series(metrics, name):
    return {s[0]["workload"]: s[1] for s in t.select(metrics, name)}


def delta(after, before, workload):
    return after.get(workload, 0.0) - before.get(workload, 0.0)


def checks_by_workload(profile):
    """Samples in the checks (those without a context label) by workload, by `pprof -raw`."""
    types, samples = pprof_raw.read(ARGS.pprof, profile)
    i = types.index("samples/count")
    in_checks = {}
    for s in samples:
        if "context" not in s.labels:
            workload = s.labels.get("workload", "")
            in_checks[workload] = in_checks.get(workload, 0) + s.values[i]
    return in_checks


def assert_follows_the_work(test, three, one, what):
    """three : one samples in the checks is the work's 3 : 1, within sampling noise."""
    n = three + one
    test.assertGreater(n, 100, "%s: too few samples in the checks to judge a split" % what)
    share = three / n
    sigma = (0.75 * 0.25 / n) ** 0.5
    print("%s: %.0f + %.0f samples in the checks, %.3f for 3 units of 4 (4 sigma + 0.02: "
          "%.3f)" % (what, three, one, share, 4 * sigma + 0.02), flush=True)
    test.assertAlmostEqual(share, 0.75, delta=4 * sigma + 0.02)


def wait_drains(daemon, n):
    """Until n more drains are done: whatever ran before is in the counters."""
    start = t.total(t.parse_metrics(daemon.scrape()), "hucprof_drains_total")
    deadline = time.time() + 60
    while t.total(t.parse_metrics(daemon.scrape()), "hucprof_drains_total") < start + n:
        if time.time() > deadline:
            raise AssertionError("no %d drains within 60 s" % n)
        time.sleep(0.3)


class Measured:
    """What a test class scraped before (`before`) and after (`after`) its workloads ran, and
    the since-start profile (`profile`) after."""

    @classmethod
    def measure_after(cls):
        """Once two more drains are done, so that whatever ran is in the counters."""
        wait_drains(cls.daemon, 2)
        cls.after = t.parse_metrics(cls.daemon.scrape())
        cls.profile = os.path.join(cls.dir, "since_start.pb.gz")
        with urllib.request.urlopen(cls.daemon.url("/debug/pprof/usercopy"), timeout=60) as r:
            with open(cls.profile, "wb") as f:
                f.write(r.read())

    def checks(self, workload):
        return delta(series(self.after, CHECKS), series(self.before, CHECKS), workload)


class WhichWorkloadPays(Measured, unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.dir = tempfile.mkdtemp(prefix="huc-workloads-", dir=ARGS.workdir)
        tag = "hucprof-test-%d" % os.getpid()
        cls.three, cls.one = t.Cgroup(tag + "-three"), t.Cgroup(tag + "-one")
        cls.daemon = t.Daemon.started(
            ARGS.hucprof, ["--mode", "sample", "--interval", "2s", "--sample-frequency",
                           str(FREQUENCY), "--prediction.window", "1h"],
            os.path.join(cls.dir, "daemon.log"))
        try:
            cls.before = t.parse_metrics(cls.daemon.scrape())
            # Four equal processes at once, three of them in "three": each runs under the
            # same contention for the 2 cores from start to end, so each pair costs the same
            # CPU in both cgroups. (One process of 3 units beside one of 1 ran its last two
            # thirds alone: on a loaded machine that split the CPU 2.15 : 1, not 3 : 1.)
            runs = [cls.three.run([ARGS.pairs, str(PAIRS), "64"]) for _ in range(3)]
            runs.append(cls.one.run([ARGS.pairs, str(PAIRS), "64"]))
            for run in runs:
                if run.wait(timeout=300) != 0:
                    raise AssertionError("huc_udp_pairs exited %d" % run.returncode)
            cls.usage = {c.name: c.usage_seconds() for c in (cls.three, cls.one)}
            cls.measure_after()
        finally:
            cls.daemon.stop()
            cls.three.close()
            cls.one.close()

    def test_the_checks_cpu_splits_as_the_work(self):
        per_sample = 1.0 / FREQUENCY
        assert_follows_the_work(self, self.checks(self.three.name) / per_sample,
                                     self.checks(self.one.name) / per_sample, "/metrics")
        kinds = {s[0]["workload"]: s[0]["workload_kind"] for s in t.select(self.after, CHECKS)}
        self.assertEqual(kinds.get(self.three.name), "cgroup")

    def test_each_workloads_busy_cpu_is_the_kernels_accounting(self):
        for cgroup in (self.three, self.one):
            busy = delta(series(self.after, BUSY), series(self.before, BUSY), cgroup.name)
            usage = self.usage[cgroup.name]
            print("%s: busy %.2f s sampled, %.2f s in cpu.stat" % (cgroup.name, busy, usage),
                  flush=True)
            self.assertAlmostEqual(busy / usage, 1.0, delta=0.1)

    def test_pprof_reads_the_same_split_from_the_profile(self):
        in_checks = checks_by_workload(self.profile)
        assert_follows_the_work(self, in_checks.get(self.three.name, 0),
                                in_checks.get(self.one.name, 0), "pprof -raw")
        # The workload label is what -tagfocus selects: each side's share of busy CPU.
        top = subprocess.run([ARGS.pprof, "-top", "-nodefraction=0",
                              "-tagfocus=workload=" + re.escape(self.three.name), self.profile],
                             capture_output=True, text=True, timeout=60, check=True).stdout
        self.assertRegex(top, r"Showing nodes accounting for")

    def test_the_report_names_both_workloads(self):
        r = subprocess.run([ARGS.hucprof, "report", self.profile], capture_output=True, text=True,
                           timeout=60)
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertIn("which workloads pay", r.stdout)
        for cgroup in (self.three, self.one):
            self.assertRegex(r.stdout, r"\n +[\d.]+ %.*" + re.escape(cgroup.name) + r" +cgroup\n")


class ShortLivedWorkloadsKeepTheirNames(Measured, unittest.TestCase):
    """Workloads that end before the drain, at the default --interval (10 s): 15 rounds of two
    cgroups side by side, 3 units of work in one and 1 in the other (as WhichWorkloadPays, each
    unit a huc_udp_pairs process of SHORT_PAIRS), each round 1-2 s, both cgroups removed right
    after. Every one is gone when the drain reads its samples; each keeps its name (the kernel
    reported it when it was made), so `[unknown]` holds at most 1 % of the checks' CPU, each
    cgroup's busy CPU is its own cpu.stat, and the checks' CPU splits 3 : 1 as the work."""

    ROUNDS = 15
    SHORT_PAIRS = 40000  # ~1-2 s a round with four of them on two cores, some load beside

    @classmethod
    def setUpClass(cls):
        cls.dir = tempfile.mkdtemp(prefix="huc-short-", dir=ARGS.workdir)
        tag = "hucprof-short-%d" % os.getpid()
        cls.daemon = t.Daemon.started(
            ARGS.hucprof, ["--mode", "sample", "--sample-frequency", str(FREQUENCY),
                           "--top-k", "100", "--prediction.window", "1h"],
            os.path.join(cls.dir, "daemon.log"))
        cls.usage, cls.threes, cls.ones, cls.lifetimes = {}, [], [], []
        try:
            cls.before = t.parse_metrics(cls.daemon.scrape())
            for i in range(cls.ROUNDS):
                three, one = t.Cgroup("%s-%d-three" % (tag, i)), t.Cgroup("%s-%d-one" % (tag, i))
                made = time.monotonic()
                try:
                    runs = [three.run([ARGS.pairs, str(cls.SHORT_PAIRS), "64"]) for _ in range(3)]
                    runs.append(one.run([ARGS.pairs, str(cls.SHORT_PAIRS), "64"]))
                    for run in runs:
                        if run.wait(timeout=300) != 0:
                            raise AssertionError("huc_udp_pairs exited %d" % run.returncode)
                    for c in (three, one):
                        cls.usage[c.name] = c.usage_seconds()
                finally:
                    three.close()
                    one.close()
                cls.lifetimes.append(time.monotonic() - made)
                cls.threes.append(three.name)
                cls.ones.append(one.name)
            cls.measure_after()
            cls.log = cls.daemon.log()
        finally:
            cls.daemon.stop()
        print("%d cgroups, each alive %.1f-%.1f s, removed before the drain that read them"
              % (2 * cls.ROUNDS, min(cls.lifetimes), max(cls.lifetimes)), flush=True)

    def test_unknown_holds_at_most_one_percent_of_the_checks_cpu(self):
        self.assertNotIn("ended between two drains is named only if", self.log,
                         "the kernel's cgroup reports are attached on this host")
        in_checks = checks_by_workload(self.profile)
        total = sum(in_checks.values())
        unknown = in_checks.get("[unknown]", 0)
        print("pprof -raw: %d of %d samples in the checks are [unknown]" % (unknown, total),
              flush=True)
        self.assertGreater(total, 300, "too few samples in the checks to judge 1 %")
        self.assertLessEqual(unknown, 0.01 * total)
        # /metrics too, where [unknown] is a series (it may be below the top-K, then in other).
        all_checks = sum(after - series(self.before, CHECKS).get(w, 0.0)
                         for w, after in series(self.after, CHECKS).items())
        self.assertLessEqual(self.checks("[unknown]"), 0.01 * all_checks)
        for name in self.threes + self.ones:
            self.assertGreater(in_checks.get(name, 0), 0, "%s named in the profile" % name)

    def test_each_cgroups_busy_cpu_is_the_kernels_accounting(self):
        busy_total = usage_total = 0.0
        for name in self.threes + self.ones:
            busy = delta(series(self.after, BUSY), series(self.before, BUSY), name)
            usage = self.usage[name]
            # Sampling noise: about 1/sqrt(samples expected); five of it, and 5 % for the clocks.
            bound = 5 / (usage * FREQUENCY) ** 0.5 + 0.05
            self.assertAlmostEqual(busy / usage, 1.0, delta=bound,
                                   msg="%s: busy %.3f s sampled, %.3f s in cpu.stat"
                                   % (name, busy, usage))
            busy_total += busy
            usage_total += usage
        print("%d short cgroups: busy %.2f s sampled, %.2f s in their cpu.stat"
              % (len(self.usage), busy_total, usage_total), flush=True)
        self.assertAlmostEqual(busy_total / usage_total, 1.0, delta=0.1)

    def test_the_checks_cpu_splits_as_the_work(self):
        per_sample = 1.0 / FREQUENCY
        three = sum(self.checks(n) for n in self.threes) / per_sample
        one = sum(self.checks(n) for n in self.ones) / per_sample
        assert_follows_the_work(self, three, one, "/metrics, short-lived")
        by_name = checks_by_workload(self.profile)
        assert_follows_the_work(
            self, sum(by_name.get(n, 0) for n in self.threes),
            sum(by_name.get(n, 0) for n in self.ones), "pprof -raw, short-lived")


class OnlyTheCommand(unittest.TestCase):
    """`record -- COMMAND` while another load runs outside: the profile is the command's."""

    def test_the_profile_holds_only_the_commands_cpu(self):
        work = tempfile.mkdtemp(prefix="huc-only-", dir=ARGS.workdir)
        out = os.path.join(work, "only.pb.gz")
        # bash's `times` prints its children's user and system time: the command's own CPU.
        script = "%s %d 64 >/dev/null && times" % (ARGS.pairs, PAIRS)
        outside = subprocess.Popen([ARGS.pairs, str(10 * PAIRS), "64"], stdout=subprocess.DEVNULL)
        try:
            r = record(["--sample-frequency", str(FREQUENCY), "-o", out], ["bash", "-c", script])
        finally:
            outside.kill()
            outside.wait()
        self.assertEqual(r.returncode, 0, r.stderr)
        children = r.stdout.strip().splitlines()[-1].split()  # "0m0.1s 0m2.3s"
        command_cpu = sum(minutes_seconds(x) for x in children)
        types, samples = pprof_raw.read(ARGS.pprof, out)
        i = types.index("samples/count")
        workloads = {s.labels.get("workload") for s in samples}
        self.assertEqual(len(workloads), 1, workloads)
        self.assertRegex(workloads.pop(), r"^/hucprof-record-\d+$")
        busy = sum(s.values[i] for s in samples) / FREQUENCY
        print("record -- COMMAND: busy %.2f s in the profile, the command's own CPU %.2f s (bash "
              "times)" % (busy, command_cpu), flush=True)
        self.assertAlmostEqual(busy / command_cpu, 1.0, delta=0.1)
        self.assertFalse(os.path.exists(r.cgroup), "the command's cgroup is removed")
        self.assertNotIn(MOVED, r.stderr)

    def test_what_the_command_left_running_keeps_running_and_its_cgroup_goes(self):
        """`sh -c 'sleep & exit 0'`: the recording ends when sh exits, as `perf record -- sh`
        does; the sleep is not killed but moved back to the recorder's cgroup (the kernel's
        /proc/PID/cgroup says where it is), and one warning line says so."""
        work = tempfile.mkdtemp(prefix="huc-left-", dir=ARGS.workdir)
        r = record(["-o", os.path.join(work, "left.pb.gz")],
                   ["sh", "-c", "sleep 600 >/dev/null 2>&1 & echo $!; exit 0"])
        self.assertEqual(r.returncode, 0, r.stderr)
        left = int(r.stdout.split()[-1])
        try:
            self.assert_left_running(r.cgroup, r.stderr, left)
        finally:
            stop(left)

    def test_a_stopped_recording_leaves_what_the_command_started_running(self):
        """SIGTERM to `record`: it is passed on to COMMAND alone (sh, which dies of it), as perf
        does; the sleep sh started keeps running, moved out of the cgroup."""
        work = tempfile.mkdtemp(prefix="huc-term-", dir=ARGS.workdir)
        proc = start_record(["-o", os.path.join(work, "term.pb.gz")],
                            ["sh", "-c", "sleep 600 >/dev/null 2>&1 & echo $!; wait"])
        cgroup, left = record_cgroup(proc.pid), None
        try:
            left = int(proc.stdout.readline())
            # COMMAND runs once its cgroup holds both processes: the recording has begun.
            procs = os.path.join(cgroup, "cgroup.procs")
            deadline = time.time() + 120
            while len(read_text(procs).split()) < 2:
                self.assertLess(time.time(), deadline, "sh and sleep not in %s" % procs)
                time.sleep(0.1)
            proc.send_signal(signal.SIGTERM)
            _, err = proc.communicate(timeout=120)
            self.assertEqual(proc.returncode, 0, err)
            self.assertIn("received SIGTERM, stopping the recording", err)
            self.assert_left_running(cgroup, err, left)
        finally:
            proc.kill()
            proc.communicate()
            if left is not None:
                stop(left)

    def assert_left_running(self, cgroup, stderr, pid):
        self.assertFalse(os.path.exists(cgroup), "the command's cgroup %s is removed" % cgroup)
        self.assertTrue(os.path.exists("/proc/%d" % pid), "the process COMMAND left still runs")
        self.assertEqual(unified_cgroup_of(pid), unified_cgroup_of(os.getpid()),
                         "it is back in the recorder's cgroup (the test's)")
        said = [ln for ln in stderr.splitlines() if MOVED in ln]
        self.assertEqual(len(said), 1, stderr)
        self.assertRegex(said[0], r" warn 1 process `sh -c .*` started outlived it and was not "
                         r"recorded after it exited: " + re.escape(MOVED) + " " +
                         re.escape(unified_cgroup_of(os.getpid())) + "$")


MOVED = "moved to hucprof's cgroup"


def record_cgroup(pid):
    """The cgroup `hucprof record -- COMMAND` makes, named after its pid: the test looks at
    its own recorder's only (another's, left by whoever, is none of its business)."""
    return os.path.join(t.unified_cgroup_root(), "hucprof-record-%d" % pid)


def start_record(options, command):
    """`hucprof record --mode sample OPTIONS -- COMMAND` (COMMAND followed), running."""
    return subprocess.Popen([ARGS.hucprof, "record", "--mode", "sample"] +
                            options + ["--"] + command, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)


def record(options, command):
    """The same, run to its end: returncode, stdout, stderr and its cgroup's path."""
    proc = start_record(options, command)
    try:
        out, err = proc.communicate(timeout=300)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.communicate()
        raise
    return types.SimpleNamespace(returncode=proc.returncode, stdout=out, stderr=err,
                                 cgroup=record_cgroup(proc.pid))


def read_text(path):
    with open(path) as f:
        return f.read()


def unified_cgroup_of(pid):
    """The "0::" line of /proc/PID/cgroup: the process's cgroup on the unified hierarchy."""
    with open("/proc/%d/cgroup" % pid) as f:
        for line in f:
            if line.startswith("0::"):
                return line[3:].rstrip("\n")
    raise AssertionError("no unified hierarchy line in /proc/%d/cgroup" % pid)


def stop(pid):
    """SIGKILL to a process the test started that is no child of it, and until it is gone."""
    try:
        os.kill(pid, signal.SIGKILL)
    except ProcessLookupError:
        return
    deadline = time.time() + 30
    while os.path.exists("/proc/%d" % pid) and time.time() < deadline:
        time.sleep(0.05)


def minutes_seconds(text):
    m, s = text.rstrip("s").split("m")
    return 60 * int(m) + float(s)


class ShortLivedCgroups(unittest.TestCase):
    """500 cgroups made, used and removed during a run: bounded series, drained kernel map."""

    def test_series_stay_bounded_and_the_kernel_map_drains(self):
        top_k = 5
        work = tempfile.mkdtemp(prefix="huc-churn-", dir=ARGS.workdir)
        daemon = t.Daemon.started(
            ARGS.hucprof, ["--mode", "sample", "--interval", "2s", "--sample-frequency",
                           str(FREQUENCY), "--top-k", str(top_k)],
            os.path.join(work, "daemon.log"))
        try:
            rss_before = t.vm_rss_kib(daemon.proc.pid)
            tag = "hucprof-churn-%d" % os.getpid()
            made = 0
            for batch in range(125):
                cgroups = [t.Cgroup("%s-%d-%d" % (tag, batch, k)) for k in range(4)]
                runs = [c.run([ARGS.pairs, "2000", "64"]) for c in cgroups]
                for run, c in zip(runs, cgroups):
                    run.wait(timeout=60)
                    c.close()
                made += len(cgroups)
            wait_drains(daemon, 2)
            metrics = t.parse_metrics(daemon.scrape())
            checks = t.select(metrics, CHECKS)
            busy = t.select(metrics, BUSY)
            print("%d cgroups: %d + %d workload series (top-k %d)" % (made, len(checks),
                                                                       len(busy), top_k))
            self.assertLessEqual(len(checks), top_k + 1, [s[0] for s in checks])
            self.assertLessEqual(len(busy), top_k + 1, [s[0] for s in busy])
            self.assertEqual(t.total(metrics, "hucprof_dropped_total", reason="busy_map_full"),
                             0)
            entries = busy_map_entries(daemon.proc.pid)
            rss = t.vm_rss_kib(daemon.proc.pid)
            print("busy_samples holds %d keys after the run; daemon RSS %d KiB, %d KiB before "
                  "the cgroups" % (entries, rss, rss_before), flush=True)
            self.assertLess(entries, 100, "the retired generations' keys are deleted")
        finally:
            daemon.stop()


def busy_map_entries(pid):
    """Keys in the daemon's busy_samples map now, by bpftool."""
    for map_id in t.held_bpf_ids(pid, "map"):
        shown = subprocess.run(["bpftool", "map", "show", "id", str(map_id)],
                               capture_output=True, text=True).stdout
        if " name busy_samples " in shown:
            dump = subprocess.run(["bpftool", "-j", "map", "dump", "id", str(map_id)],
                                  capture_output=True, text=True, check=True).stdout
            return dump.count('"key"')
    raise AssertionError("the daemon holds no busy_samples map")


def main():
    global ARGS
    ARGS, rest = t.script_args("hucprof", "pairs", optional=["pprof"])
    import shutil
    return t.run_unittests(rest, ARGS.workdir, [
        (t.is_root(), "workloads: needs root (BPF, perf_event_open, cgroups)"),
        t.has_btf("workloads"),
        (t.unified_cgroup_root() is not None, "workloads: no cgroup v2 hierarchy on this host"),
        (shutil.which("bpftool"), "workloads: bpftool not installed (scripts/install-deps.sh)"),
        (ARGS.pprof and os.access(ARGS.pprof, os.X_OK),
         "workloads: Google's pprof was not built (scripts/install-deps.sh)"),
    ])


if __name__ == "__main__":
    sys.exit(main())
