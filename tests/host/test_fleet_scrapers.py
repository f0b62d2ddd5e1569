#!/usr/bin/env python3
"""Host tier, fleet scrapers: the requests Parca and Grafana Alloy make with the shipped configs
(deploy/parca/parca.yaml, deploy/alloy/hucprof.alloy), replayed against a real daemon during a
UDP flood, and their answers checked as those scrapers check them.

The requests come from tests/lint/fleet/fleet_configs.py (path, ?seconds=N, timeout, as each
scraper derives them from its config); profile_scraper (Go) sends them with the HTTP client
settings of prometheus/common that both scrapers use (no Accept-Encoding), applies Alloy's
response validation and parses the body with github.com/google/pprof/profile, what Parca and
Pyroscope parse profiles with. Both scrapers wait at once, as they would on a node scraped by
both, each from an address of its own (on a fleet they are other hosts; hucprof keeps one
waiting window per client address); a third delta request from a third address meanwhile gets
hucprof's documented 429."""

import http.client
import json
import os
import subprocess
import sys
import threading
import time
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "lib"))
sys.path.insert(0, os.path.join(HERE, "..", "lint", "fleet"))
import hucprof_testlib as t  # noqa: E402

REPO = os.path.abspath(os.path.join(HERE, "..", ".."))
ARGS = None
USER_AGENTS = {"parca": "conprof/v0.24.0", "alloy": "Alloy/v1.10.0 (linux; binary)"}
# Where each scraper connects from (on a fleet they are other hosts): loopback addresses.
CLIENT_ADDRESS = {"parca": "127.0.0.1", "alloy": "127.0.0.2"}
THIRD_ADDRESS = "127.0.0.3"


def shipped_requests():
    import fleet_configs as fc
    with open(os.path.join(REPO, "deploy", "parca", "parca.yaml")) as f:
        parca = fc.check_parca(f.read(), run_promtool=False)
    with open(os.path.join(REPO, "deploy", "alloy", "hucprof.alloy")) as f:
        alloy = fc.check_alloy(f.read())
    return parca + alloy


class FleetScrapers(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.requests = shipped_requests()
        # The shipped sampling rate and interval: what a node runs.
        cls.daemon = t.Daemon.started(ARGS.hucprof, ["--mode", "sample"],
                                      os.path.join(ARGS.workdir, "host_fleet_daemon.log"))
        longest = max(int(r.query["seconds"][0]) for r in cls.requests)
        flood = subprocess.Popen([ARGS.flood, "--seconds", str(longest + 3), "--payload", "64"],
                                 stdout=subprocess.DEVNULL)
        cls.results, threads = {}, []
        try:
            time.sleep(1)
            for r in cls.requests:
                th = threading.Thread(target=cls.scrape, args=(r,))
                th.start()
                threads.append(th)
            time.sleep(1)  # both are waiting now
            conn = http.client.HTTPConnection("127.0.0.1", cls.daemon.port, timeout=30,
                                              source_address=(THIRD_ADDRESS, 0))
            conn.request("GET", "/debug/pprof/usercopy?seconds=5")
            answer = conn.getresponse()
            cls.third = answer.status, answer.read().decode(errors="replace")
            conn.close()
            for th in threads:
                th.join()
        finally:
            flood.wait(timeout=120)

    @classmethod
    def scrape(cls, r):
        started = time.monotonic()
        p = subprocess.run([ARGS.scraper, "-url", cls.daemon.url(r.target),
                            "-timeout", "%gs" % r.timeout_s, "-user-agent", USER_AGENTS[r.scraper],
                            "-source", CLIENT_ADDRESS[r.scraper]],
                           capture_output=True, text=True, timeout=r.timeout_s + 30)
        out = json.loads(p.stdout) if p.stdout.strip() else {"error": p.stderr}
        out["rc"], out["wall_s"] = p.returncode, time.monotonic() - started
        cls.results[r.scraper] = out
        print(r.scraper, r.target, "->", json.dumps({k: v for k, v in out.items()
                                                    if k != "by_label"}), flush=True)

    @classmethod
    def tearDownClass(cls):
        cls.daemon.stop()

    def each(self):
        self.assertEqual({r.scraper for r in self.requests}, {"parca", "alloy"})
        for r in self.requests:
            with self.subTest(scraper=r.scraper):
                yield r, self.results[r.scraper]

    def test_the_scrapers_accept_the_answer(self):
        for r, out in self.each():
            self.assertEqual(out["rc"], 0, out.get("error"))
            self.assertEqual(out["status"], 200)
            self.assertTrue(out["content_type"].startswith("application/octet-stream"))
            self.assertTrue(out["gzip"])

    def test_they_send_what_their_client_sends(self):
        for r, out in self.each():
            sent = {k.lower() for k in out["sent_headers"]}
            self.assertIn("user-agent", sent)
            # prometheus/common's transport disables compression: nothing to negotiate, and the
            # pprof body is gzip itself.
            self.assertNotIn("accept-encoding", sent)

    def test_each_gets_the_window_it_asked_for_within_its_timeout(self):
        for r, out in self.each():
            seconds = int(r.query["seconds"][0])
            self.assertGreaterEqual(out["elapsed_s"], seconds)
            self.assertLess(out["elapsed_s"], r.timeout_s)
            window = out["duration_nanos"] / 1e9
            self.assertGreaterEqual(window, seconds)
            self.assertLess(window, seconds + 2.0, "the window, not the time since start")

    def test_the_window_holds_the_flood(self):
        for r, out in self.each():
            cpu = out["by_label"].get("cpu", {})
            udp = sum(v for k, v in cpu.items() if k.startswith("udp_"))
            self.assertGreater(udp, 0, "udp_* call sites in %s" % sorted(cpu))

    def test_a_third_waiting_request_is_told_to_come_back(self):
        status, body = self.third
        self.assertEqual(status, 429, body)
        self.assertIn("too many profile requests waiting", body)


def main():
    global ARGS
    ARGS, rest = t.script_args("hucprof", "flood", optional=["scraper"])
    return t.run_unittests(rest, ARGS.workdir, [
        (t.is_root(), "host fleet scrapers: needs root (BPF and perf_event_open)"),
        (ARGS.scraper and os.access(ARGS.scraper, os.X_OK),
         "host fleet scrapers: profile_scraper was not built (golang-go and "
         "golang-github-google-pprof-dev: scripts/install-deps.sh)"),
    ])


if __name__ == "__main__":
    sys.exit(main())
