#!/usr/bin/env python3
"""The web front's connection cap under bursts, side by side with another build: hucprof's web
server without BPF (tests/tools/huc_web_serve), loopback only, no root.

  back_to_back   600 connections opened one after another and held: how many the server
                 still has open once it settles (its sockets in /proc/PID/fd, listener included;
                 the cap is 512)
  burst          under `prlimit --nofile=N`, BURST connections opened as fast as possible and
                 held while a scraper fetches /metrics on a fresh connection every 100 ms:
                 scrape latency (p50, max), failures, and "Too many open files" in the log

  bench/connection_burst.py --web-serve build/tests/tools/huc_web_serve [--baseline OLD]
                            [--nofile 1024] [--burst 1500] [--rounds 2]
"""

import argparse
import os
import resource
import socket
import statistics
import subprocess
import sys
import threading
import tempfile
import time

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "tests", "lib"))
import hucprof_testlib as t  # noqa: E402


class Server:
    def __init__(self, binary, wrapper=()):
        self.log = tempfile.NamedTemporaryFile("w+", prefix="hucprof-burst-", suffix=".log", delete=False)
        self.proc = subprocess.Popen(list(wrapper) + [binary, "--web.listen-address", "127.0.0.1:0"],
                                     stdout=subprocess.PIPE, stderr=self.log, text=True)
        line = self.proc.stdout.readline()
        if not line.startswith("listening on "):
            raise RuntimeError("huc_web_serve did not start: " + line)
        self.port = int(line.split()[2].rsplit(":", 1)[1])

    def sockets(self):
        n = 0
        for fd in os.listdir("/proc/%d/fd" % self.proc.pid):
            try:
                n += os.readlink("/proc/%d/fd/%s" % (self.proc.pid, fd)).startswith("socket:")
            except OSError:
                pass
        return n

    def stop(self):
        self.proc.terminate()
        self.proc.wait(timeout=30)
        self.log.seek(0)
        text = self.log.read()
        self.log.close()
        os.unlink(self.log.name)
        return text


def scrape(port, timeout=15):
    status, _, took = t.timed_get(port, "/metrics", timeout)
    return status == 200, took


def settle(server, seconds=5):
    """Sockets once they stop changing (closes chosen for room are asynchronous)."""
    last, deadline = server.sockets(), time.monotonic() + seconds
    while time.monotonic() < deadline:
        time.sleep(0.5)
        now = server.sockets()
        if now == last:
            return now
        last = now
    return last


def back_to_back(binary):
    server = Server(binary)
    held = [socket.create_connection(("127.0.0.1", server.port)) for _ in range(600)]
    open_after = settle(server)
    ok, took = scrape(server.port)
    for s in held:
        s.close()
    server.stop()
    return "600 held: %d sockets open in the server (cap 512 + listener), then a scrape %s in %.0f ms" % (
        open_after, "ok" if ok else "FAILED", took * 1000)


def burst(binary, nofile, count):
    server = Server(binary, wrapper=["prlimit", "--nofile=%d" % nofile])
    results, stop = [], threading.Event()

    def scraper():
        while not stop.is_set():
            results.append(scrape(server.port))
            time.sleep(0.1)

    thread = threading.Thread(target=scraper)
    thread.start()
    time.sleep(0.5)
    held, refused = [], 0
    started = time.monotonic()
    for _ in range(count):
        try:
            held.append(socket.create_connection(("127.0.0.1", server.port), timeout=5))
        except OSError:
            refused += 1
    opened_in = time.monotonic() - started
    time.sleep(3)
    stop.set()
    thread.join()
    open_after = server.sockets()
    for s in held:
        s.close()
    log = server.stop()
    times = sorted(t for ok, t in results if ok)
    failed = sum(1 for ok, _ in results if not ok)
    emfile = log.count("Too many open files")
    return ("nofile %d, burst of %d in %.1f s (%d not connected): %d scrapes, %d failed, p50 %.0f ms, "
            "max %.0f ms; %d sockets open after; 'Too many open files' logged %d times" % (
                nofile, count, opened_in, refused, len(results), failed,
                1000 * statistics.median(times) if times else -1, 1000 * max(times) if times else -1,
                open_after, emfile))


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--web-serve", required=True)
    p.add_argument("--baseline", help="another huc_web_serve, run alternately")
    p.add_argument("--nofile", type=int, default=1024)
    p.add_argument("--burst", type=int, default=1500)
    p.add_argument("--rounds", type=int, default=2)
    args = p.parse_args()
    # The client holds the burst's sockets itself: its own limit must not be what runs out.
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    resource.setrlimit(resource.RLIMIT_NOFILE, (max(soft, min(hard, args.burst + 1024)), hard))
    builds = [("new", args.web_serve)] + ([("baseline", args.baseline)] if args.baseline else [])
    for round_ in range(args.rounds):
        for name, binary in builds:
            print("%-8s round %d back_to_back: %s" % (name, round_ + 1, back_to_back(binary)), flush=True)
            print("%-8s round %d burst:        %s" % (name, round_ + 1, burst(binary, args.nofile, args.burst)),
                  flush=True)


if __name__ == "__main__":
    main()
