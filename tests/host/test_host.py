#!/usr/bin/env python3
"""Host tier: the real daemon on this machine's kernel, against a real UDP loopback flood.

This kernel cannot probe (no kprobes, fentry EPERM), so probe targets must be reported
unavailable with a reason while sampling attributes the flood to udp_recvmsg."""

import os
import re
import socket
import subprocess
import sys
import time
import unittest

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "lib"))
import hucprof_testlib as t  # noqa: E402

ARGS = None
RAW_ADDRESS = re.compile(r"\b(0x)?ffff[0-9a-f]{12}\b")


def kernel_can_kprobe():
    return os.path.exists("/sys/bus/event_source/devices/kprobe/type")


def run_cli(*args, timeout=60):
    return subprocess.run([ARGS.hucprof] + list(args), capture_output=True, text=True,
                          timeout=timeout)


class FloodTest(unittest.TestCase):
    """One daemon, one flood; several assertions on what it serves."""

    @classmethod
    def setUpClass(cls):
        cls.log = os.path.join(ARGS.workdir, "host_flood_daemon.log")
        cls.daemon = t.Daemon(ARGS.hucprof, ["--mode", "auto", "--interval", "1s",
                                             "--sample-frequency", "499"], cls.log)
        try:
            cls.daemon.wait_ready()
            cls.before = cls.daemon.scrape()
            flood = subprocess.run([ARGS.flood, "--seconds", "10", "--payload", "64"],
                                   capture_output=True, text=True, timeout=60)
            print("flood:", flood.stdout.strip(), flush=True)
            # Two drains after the flood so its last samples are in.
            time.sleep(2.5)
            cls.after_text = cls.daemon.scrape()
            cls.after = t.parse_metrics(cls.after_text)
        except Exception:
            cls.daemon.stop()
            raise

    @classmethod
    def tearDownClass(cls):
        cls.exit_code = cls.daemon.stop()
        print("daemon log:\n" + cls.daemon.log(), flush=True)

    def test_udp_recvmsg_is_attributed_and_below_the_kernel_denominator(self):
        recv = t.total(self.after, "usercopy_cpu_samples_total", callsite="udp_recvmsg")
        kernel = t.total(self.after, "usercopy_sampled_cpu_samples_total", context="kernel")
        print("udp_recvmsg samples %d of %d kernel samples (%.2f%%)"
              % (recv, kernel, 100.0 * recv / max(kernel, 1)), flush=True)
        self.assertGreater(recv, 0, self.after_text)
        self.assertLess(recv, kernel)

    def test_udp_recvmsg_samples_name_the_syscall(self):
        syscalls = {l["syscall"] for l, _ in
                    t.select(self.after, "usercopy_cpu_samples_total", callsite="udp_recvmsg")}
        self.assertIn("recvfrom", syscalls)

    def test_probe_targets_unavailable_with_reason_while_serving(self):
        if kernel_can_kprobe():
            self.skipTest("this kernel has kprobes; the unavailable-probe path is for kernels "
                          "without them")
        attached = t.select(self.after, "hucprof_probe_attached",
                            target="__check_object_size")
        self.assertEqual(attached, [({"target": "__check_object_size", "mode": "none"}, 0.0)])
        reasons = t.select(self.after, "hucprof_probe_unavailable_info",
                           target="__check_object_size")
        self.assertEqual(len(reasons), 1)
        self.assertIn("kprobe", reasons[0][0]["reason"])
        self.assertIn("fentry", reasons[0][0]["reason"])
        sampler = t.select(self.after, "hucprof_probe_attached", target="cpu-clock",
                           mode="perf_event")
        self.assertEqual([v for _, v in sampler], [1.0])
        # The reason is in the log too, one line per target.
        self.assertRegex(self.daemon.log(), r"probe __check_object_size: unavailable: .*kprobe")

    def test_no_raw_kernel_address_is_served(self):
        self.assertIsNone(RAW_ADDRESS.search(self.after_text))

    def test_hardened_state_matches_kernel_config(self):
        import gzip
        try:
            config = gzip.open("/proc/config.gz", "rt").read()
        except OSError:
            self.skipTest("no /proc/config.gz to compare with")
        with open("/proc/cmdline") as f:
            cmdline = f.read()
        expected = 1.0 if ("CONFIG_HARDENED_USERCOPY=y" in config and
                           "hardened_usercopy=off" not in cmdline) else 0.0
        self.assertEqual(t.total(self.after, "usercopy_hardened_enabled"), expected)

    def test_counters_only_grow(self):
        before = {(n, tuple(sorted(l.items()))): v for n, l, v in t.parse_metrics(self.before)
                  if n.endswith("_total")}
        for n, l, v in self.after:
            key = (n, tuple(sorted(l.items())))
            if key in before:
                self.assertGreaterEqual(v, before[key], key)

    def test_unknown_path_is_404(self):
        status, _ = t.http_get(self.daemon.url("/nope"))
        self.assertEqual(status, 404)


class CliTest(unittest.TestCase):
    def test_sigterm_exits_zero(self):
        log = os.path.join(ARGS.workdir, "host_sigterm.log")
        d = t.Daemon.started(ARGS.hucprof, ["--interval", "1s"], log)
        self.assertEqual(d.stop(), 0, d.log())
        self.assertIn("detaching", d.log())

    def test_forced_probe_mode_fails_naming_the_reason(self):
        if kernel_can_kprobe():
            self.skipTest("this kernel has kprobes, so --mode probe can attach here")
        r = run_cli("run", "--mode", "probe", "--web.listen-address",
                    "127.0.0.1:%d" % t.free_port())
        self.assertEqual(r.returncode, 1, r.stderr)
        self.assertRegex(r.stdout + r.stderr, r"--mode probe: no probe could attach: .*kprobe")

    def test_bad_flag_value_names_the_flag(self):
        r = run_cli("run", "--sample-frequency", "0")
        self.assertEqual(r.returncode, 2)
        self.assertIn("--sample-frequency", r.stderr)

    def test_unknown_flag_is_named(self):
        r = run_cli("run", "--no-such-flag")
        self.assertEqual(r.returncode, 2)
        self.assertIn("--no-such-flag", r.stderr)

    def test_port_in_use_names_the_flag(self):
        with socket.socket() as s:
            s.bind(("127.0.0.1", 0))
            s.listen()
            r = run_cli("run", "--web.listen-address", "127.0.0.1:%d" % s.getsockname()[1])
        self.assertEqual(r.returncode, 1, r.stdout + r.stderr)
        self.assertIn("--web.listen-address", r.stdout + r.stderr)

    def test_doctor_reports_what_this_kernel_allows(self):
        r = run_cli("doctor")
        print(r.stdout, flush=True)
        self.assertEqual(r.returncode, 0, r.stdout + r.stderr)
        self.assertRegex(r.stdout, r"perf_event sampling\s+yes")
        self.assertIn("__check_object_size", r.stdout)
        self.assertIn("verdict: `hucprof run --mode auto` will run", r.stdout)
        if not kernel_can_kprobe():
            self.assertRegex(r.stdout, r"kprobes\s+no")


class DoctorIsRunTest(unittest.TestCase):
    """doctor's verdict comes from loading the very programs run loads (and unloading them): for
    every mode, what doctor says run will do is what run does on this kernel, word for word."""

    VERDICT = re.compile(r"^verdict: `hucprof run --mode \S+` (will run|cannot start): (.*)$", re.M)

    def test_doctor_says_what_run_does(self):
        for flags in (["--mode", "auto"], ["--mode", "sample"], ["--mode", "probe"],
                      ["--mode", "auto", "--probe.subchecks", "attach", "--latency"],
                      ["--mode", "probe", "--probe.attach", "kprobe"]):
            with self.subTest(flags=flags):
                doctor = run_cli("doctor", *flags)
                verdict = self.VERDICT.search(doctor.stdout)
                self.assertIsNotNone(verdict, doctor.stdout + doctor.stderr)
                print(f"doctor {' '.join(flags)}: {verdict.group(0)}", flush=True)
                log = os.path.join(ARGS.workdir, f"host_doctor_is_run_{'_'.join(flags)}.log")
                if verdict.group(1) == "will run":
                    self.assertEqual(doctor.returncode, 0)
                    d = t.Daemon.started(ARGS.hucprof, flags + ["--interval", "1s"], log)
                    try:
                        running = re.search(r" running: (.*)$", d.log(), re.M)
                    finally:
                        self.assertEqual(d.stop(), 0, d.log())
                    self.assertIsNotNone(running, d.log())
                    self.assertEqual(running.group(1), verdict.group(2))
                else:
                    self.assertEqual(doctor.returncode, 1)
                    r = run_cli("run", *flags, "--web.listen-address",
                                "127.0.0.1:%d" % t.free_port())
                    self.assertEqual(r.returncode, 1, r.stdout + r.stderr)
                    self.assertIn(verdict.group(2), r.stdout + r.stderr)


def main():
    global ARGS
    ARGS, rest = t.script_args("hucprof", "flood")
    return t.run_unittests(rest, ARGS.workdir, [
        (t.is_root(), "host tier: needs root (BPF and perf_event_open); run the README test "
                      "command as root"),
        t.has_btf("host tier")])


if __name__ == "__main__":
    sys.exit(main())
