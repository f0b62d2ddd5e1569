#!/usr/bin/env python3
"""How /metrics holds up under hostile and heavy clients (issue 9), for one or two hucprof
binaries side by side (e.g. a civetweb build as --baseline), alternating A B A B:

  slowloris  50 connections held open by sending one header line per second and never ending
             the request (reconnecting when the server drops one), while a well-behaved client
             scrapes /metrics on a fresh connection every 100 ms with a 5 s timeout: latency
             percentiles and failed scrapes over --seconds (goal: p99 <= 50 ms, 0 failed);
  flood      16 concurrent keep-alive clients (wrk -t2 -c16) on /metrics for --wrk-seconds
             during a UDP loopback flood (huc_udp_flood): wrk's latency percentiles and errors
             (goal: p99 <= 20 ms).

  sudo bench/http_front.py --hucprof build/daemon/hucprof --flood build/tests/tools/huc_udp_flood \
      [--baseline /path/to/old/hucprof] [--rounds 1] [--seconds 60] [--wrk-seconds 30]

Each daemon runs `--mode sample --interval 1s` (root: it attaches the sampler). A benchmark,
not a test: it prints numbers and whether the goals are met, and asserts nothing.
"""
import argparse
import os
import re
import select
import shutil
import socket
import statistics
import subprocess
import sys
import threading
import time

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "tests", "lib"))
import hucprof_testlib as t  # noqa: E402

SLOWLORIS = 50


class Slowloris(threading.Thread):
    """SLOWLORIS connections that each send a header line per second and never finish."""

    def __init__(self, port):
        super().__init__(daemon=True)
        self.port, self.stop, self.reconnects = port, threading.Event(), 0
        self.socks = []

    def connect(self):
        s = socket.create_connection(("127.0.0.1", self.port), timeout=5)
        s.setblocking(False)
        s.sendall(b"GET /metrics HTTP/1.1\r\nHost: bench\r\n")
        return s

    def run(self):
        self.socks = [self.connect() for _ in range(SLOWLORIS)]
        n = 0
        while not self.stop.wait(1.0):
            n += 1
            for i, s in enumerate(self.socks):
                try:
                    # A closed connection reads as EOF; an open one has nothing to read.
                    readable, _, _ = select.select([s], [], [], 0)
                    if readable and not s.recv(4096):
                        raise ConnectionError("closed")
                    s.send(b"X-a%d: b\r\n" % n)
                except (OSError, ConnectionError):
                    s.close()
                    self.reconnects += 1
                    try:
                        self.socks[i] = self.connect()
                    except OSError:
                        pass
        for s in self.socks:
            s.close()


def scrape_once(port, timeout=5.0):
    status, body, took = t.timed_get(port, "/metrics", timeout)
    return status == 200 and b"usercopy_" in body, took


def percentile(values, p):
    if not values:
        return float("nan")
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(round(p / 100 * (len(ordered) - 1))))]


def slowloris_round(port, seconds):
    attack = Slowloris(port)
    attack.start()
    time.sleep(2)  # all 50 connected and started
    latencies, failed = [], 0
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        ok, took = scrape_once(port)
        if ok:
            latencies.append(took)
        else:
            failed += 1
        time.sleep(0.1)
    attack.stop.set()
    attack.join(timeout=10)
    return {"scrapes": len(latencies) + failed, "failed": failed,
            "p50_ms": 1000 * percentile(latencies, 50), "p99_ms": 1000 * percentile(latencies, 99),
            "max_ms": 1000 * max(latencies, default=float("nan")), "reconnects": attack.reconnects}


def wrk_ms(text):
    m = re.match(r"([\d.]+)(us|ms|s)", text)
    value, unit = float(m.group(1)), m.group(2)
    return value / 1000 if unit == "us" else value * 1000 if unit == "s" else value


def flood_round(port, flood, seconds):
    load = subprocess.Popen([flood, "--seconds", str(seconds + 5), "--payload", "64"],
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    time.sleep(1)
    r = subprocess.run(["wrk", "-t2", "-c16", f"-d{seconds}s", "--timeout", "5s", "--latency",
                        f"http://127.0.0.1:{port}/metrics"], capture_output=True, text=True)
    load.wait()
    out = r.stdout
    pct = dict(re.findall(r"^\s+(50|90|99)%\s+(\S+)", out, re.M))
    requests = re.search(r"(\d+) requests in", out)
    errors = re.search(r"Socket errors: connect (\d+), read (\d+), write (\d+), timeout (\d+)", out)
    non2xx = re.search(r"Non-2xx or 3xx responses: (\d+)", out)
    return {"requests": int(requests.group(1)) if requests else 0,
            "p50_ms": wrk_ms(pct["50"]) if "50" in pct else float("nan"),
            "p99_ms": wrk_ms(pct["99"]) if "99" in pct else float("nan"),
            "errors": sum(map(int, errors.groups())) if errors else 0,
            "non2xx": int(non2xx.group(1)) if non2xx else 0,
            "flood": load.stdout.read().strip() if load.stdout else ""}


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--hucprof", required=True)
    p.add_argument("--baseline", help="another hucprof binary to measure alternately")
    p.add_argument("--flood", required=True)
    p.add_argument("--rounds", type=int, default=1)
    p.add_argument("--seconds", type=int, default=60)
    p.add_argument("--wrk-seconds", type=int, default=30)
    a = p.parse_args()
    if os.geteuid() != 0:
        sys.exit("http_front: needs root (the daemons attach the sampler)")
    if not shutil.which("wrk"):
        sys.exit("http_front: needs wrk (scripts/install-deps.sh installs it)")
    binaries = ([("baseline", a.baseline)] if a.baseline else []) + [("hucprof", a.hucprof)]
    results = {name: {"slowloris": [], "flood": []} for name, _ in binaries}
    for r in range(a.rounds):
        for scenario in ("slowloris", "flood"):
            for name, binary in binaries:
                log = f"/tmp/hucprof_http_bench_{name}.log"
                with t.running_daemon(binary, ["--mode", "sample", "--interval", "1s"], log) as d:
                    if scenario == "slowloris":
                        res = slowloris_round(d.port, a.seconds)
                    else:
                        res = flood_round(d.port, a.flood, a.wrk_seconds)
                results[name][scenario].append(res)
                print(f"round {r + 1} {scenario:9} {name:8} " +
                      " ".join(f"{k}={v:.1f}" if isinstance(v, float) else f"{k}={v}"
                               for k, v in res.items() if k != "flood"), flush=True)
    print()
    for name, _ in binaries:
        sl, fl = results[name]["slowloris"], results[name]["flood"]
        worst_p99 = max(x["p99_ms"] for x in sl)
        failed = sum(x["failed"] for x in sl)
        scrapes = sum(x["scrapes"] for x in sl)
        flood_p99 = statistics.median(x["p99_ms"] for x in fl)
        print(f"{name}: with {SLOWLORIS} slowloris connections: {failed} of {scrapes} scrapes failed, "
              f"p99 {worst_p99:.1f} ms (goal <= 50 ms, 0 failed: "
              f"{'met' if worst_p99 <= 50 and failed == 0 else 'NOT met'}); "
              f"16 clients during a flood: p99 {flood_p99:.1f} ms (goal <= 20 ms: "
              f"{'met' if flood_p99 <= 20 else 'NOT met'}), "
              f"{statistics.median(x['requests'] for x in fl) / a.wrk_seconds:.0f} req/s")


if __name__ == "__main__":
    main()
