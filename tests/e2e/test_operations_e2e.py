#!/usr/bin/env python3
"""e2e_operations: what orchestrators and operators ask of a running hucprof, against the real
daemon (root, this kernel):

  - /-/healthy and /-/ready (Prometheus' convention) answer 200 once it runs, at the paths the
    DaemonSet's probes name (read from deploy/kubernetes/daemonset.yaml), in well under the
    kubelet's 1 s timeout, while a UDP flood runs;
  - --web.listen-address given twice serves every page on both addresses;
  - --web.telemetry-path moves the metrics (the old path is 404, the landing page links there);
  - --web.systemd-socket under systemd-socket-activate (systemd's own tool): the daemon serves the
    socket it was handed, and without one exits 2 naming the problem;
  - `hucprof record -F 499` (perf's flag) then `hucprof report` without a file reads the
    recording (like perf report reads perf.data).
"""

import os
import shutil
import socket
import subprocess
import sys
import tempfile
import time
import unittest
import urllib.request

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "lib"))
import hucprof_testlib as t  # noqa: E402

REPO = os.path.abspath(os.path.join(HERE, "..", ".."))
ARGS = None


def probe_paths():
    import yaml
    with open(os.path.join(REPO, "deploy", "kubernetes", "daemonset.yaml")) as f:
        ds = next(d for d in yaml.safe_load_all(f) if d and d.get("kind") == "DaemonSet")
    c = ds["spec"]["template"]["spec"]["containers"][0]
    return {k: c[k]["httpGet"]["path"] for k in ("startupProbe", "readinessProbe",
                                                 "livenessProbe")}


def wait_http(url, timeout=30):
    deadline = time.time() + timeout
    while time.time() < deadline:
        try:
            status, body = t.http_get(url, timeout=1)
            if status == 200:
                return status, body
        except OSError:
            pass
        time.sleep(0.2)
    raise AssertionError(f"{url} did not answer 200 within {timeout}s")


class RunningDaemon(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.second = t.free_port()
        cls.daemon = t.Daemon.started(ARGS.hucprof, [
            "--mode", "sample", "--interval", "1s",
            "--web.listen-address", f"[::1]:{cls.second}",
            "--web.telemetry-path", "/probe/metrics"],
            os.path.join(ARGS.workdir, "e2e_operations.log"))

    @classmethod
    def tearDownClass(cls):
        cls.daemon.stop()

    def test_probe_paths_answer_fast_during_a_flood(self):
        flood = subprocess.Popen([ARGS.flood, "--seconds", "6", "--payload", "64"],
                                 stdout=subprocess.DEVNULL)
        try:
            time.sleep(1)
            for probe, path in sorted(probe_paths().items()):
                started = time.monotonic()
                status, body = t.http_get(self.daemon.url(path), timeout=1)
                took = time.monotonic() - started
                with self.subTest(probe=probe, path=path):
                    self.assertEqual(status, 200, body)
                    self.assertLess(took, 0.5, "the kubelet's default timeout is 1 s")
        finally:
            flood.wait(timeout=60)
        self.assertEqual(t.http_get(self.daemon.url("/-/ready"))[1], "hucprof is Ready.\n")
        self.assertEqual(t.http_get(self.daemon.url("/-/healthy"))[1], "hucprof is Healthy.\n")

    def test_both_addresses_serve_every_page(self):
        for base in (f"http://127.0.0.1:{self.daemon.port}", f"http://[::1]:{self.second}"):
            for path in ("/probe/metrics", "/-/ready", "/debug/pprof/usercopy", "/"):
                with self.subTest(url=base + path):
                    with urllib.request.urlopen(base + path, timeout=10) as r:
                        self.assertEqual(r.status, 200)

    def test_the_telemetry_path_moves_the_metrics(self):
        status, body = t.http_get(self.daemon.url("/probe/metrics"))
        self.assertEqual(status, 200)
        self.assertIn("hucprof_drains_total", body)
        self.assertEqual(t.http_get(self.daemon.url("/metrics"))[0], 404)
        # The web view links to where the metrics are now.
        self.assertIn('href="probe/metrics"', t.http_get(self.daemon.url("/"), timeout=10)[1])


class SocketActivation(unittest.TestCase):
    def test_serves_the_socket_systemd_hands_over(self):
        activate = shutil.which("systemd-socket-activate")
        if not activate:
            self.skipTest("systemd-socket-activate not installed (systemd)")
        port = t.free_port()
        log = open(os.path.join(ARGS.workdir, "e2e_socket_activation.log"), "w")
        # -l binds and listens before hucprof starts; LISTEN_FDS=1 tells hucprof it has it.
        p = subprocess.Popen([activate, "-l", f"127.0.0.1:{port}", ARGS.hucprof, "run",
                              "--mode", "sample", "--web.systemd-socket"],
                             stdout=log, stderr=subprocess.STDOUT)
        try:
            wait_http(f"http://127.0.0.1:{port}/-/ready", timeout=30)
            self.assertEqual(t.http_get(f"http://127.0.0.1:{port}/metrics")[0], 200)
        finally:
            p.terminate()
            self.assertEqual(p.wait(timeout=20), 0)
            log.close()
        with open(log.name) as f:
            self.assertIn(f"serving metrics on http://127.0.0.1:{port}/metrics", f.read())

    def test_without_a_socket_it_says_so(self):
        r = subprocess.run([ARGS.hucprof, "run", "--mode", "sample", "--web.systemd-socket"],
                           capture_output=True, text=True, timeout=60)
        self.assertEqual(r.returncode, 2, r.stderr)
        self.assertIn("--web.systemd-socket: systemd passed no socket", r.stderr)


class RecordAndReport(unittest.TestCase):
    def test_record_dash_f_then_report_reads_the_default_file(self):
        with tempfile.TemporaryDirectory() as tmp:
            rec = subprocess.run([ARGS.hucprof, "record", "--mode", "sample", "-F", "499",
                                  "--duration", "2s"], cwd=tmp, capture_output=True, text=True,
                                 timeout=120)
            self.assertEqual(rec.returncode, 0, rec.stderr)
            self.assertTrue(os.path.isfile(os.path.join(tmp, "usercopy.pb.gz")))
            rep = subprocess.run([ARGS.hucprof, "report"], cwd=tmp, capture_output=True,
                                 text=True, timeout=60)
            self.assertEqual(rep.returncode, 0, rep.stderr)
            self.assertIn("sampling every 2.004 ms per CPU", rep.stdout)  # 1e9 / 499 ns
        with tempfile.TemporaryDirectory() as empty:
            missing = subprocess.run([ARGS.hucprof, "report"], cwd=empty, capture_output=True,
                                     text=True, timeout=60)
            self.assertEqual(missing.returncode, 2)
            self.assertIn("usercopy.pb.gz", missing.stderr)


def main():
    global ARGS
    ARGS, rest = t.script_args("hucprof", "flood")
    ARGS.hucprof = os.path.abspath(ARGS.hucprof)  # the record test runs it from a temp dir
    return t.run_unittests(rest, ARGS.workdir, [
        (t.is_root(), "e2e operations: needs root (BPF and perf_event_open)"),
        t.has_btf("e2e operations"),
    ])


if __name__ == "__main__":
    sys.exit(main())
