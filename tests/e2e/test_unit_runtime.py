#!/usr/bin/env python3
"""What deploy/hucprof.service promises systemd, checked against the real daemon without systemd:

  - Type=notify: with NOTIFY_SOCKET set, hucprof sends READY=1, and /metrics already answers
    when it does (READY means attached and listening);
  - WatchdogSec=: with WATCHDOG_USEC set it sends WATCHDOG=1 at least every WATCHDOG_USEC/2;
  - SIGTERM: exit 0 (the unit counts it as a clean stop, not a failure to restart);
  - ProtectSystem=strict / InaccessiblePaths=: it opens no file for writing and nothing the
    unit hides (/proc/kcore, /proc/kmsg);
  - SystemCallFilter=: every system call hucprof makes (start, attach, drain, serve /metrics,
    sd_notify, stop — traced with strace -f under a UDP loopback flood) is in the allow list
    the unit's SystemCallFilter= lines produce (groups expanded by `systemd-analyze
    syscall-filter`). A call outside it would fail with EPERM under systemd.

Needs root, strace and systemd-analyze; exits 77 with the reason otherwise.
Closing line: 'N passed, N failed'.
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import signal
import socket
import subprocess
import struct
import sys
import tempfile
import threading
import time

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.normpath(os.path.join(HERE, "..", ".."))
sys.dont_write_bytecode = True  # no __pycache__ in the source tree
sys.path.insert(0, HERE)
import e2e_lib as lib  # noqa: E402

WATCHDOG_USEC = 2_000_000
SO_TIMESTAMP = 29  # asm-generic/socket.h; Python's socket module does not export it
RUN_SECONDS = 10


def unit_paths(unit: str) -> tuple[list[str], list[str]]:
    """InaccessiblePaths= and ReadOnlyPaths= of the unit ('-' prefixes dropped)."""
    inaccessible, read_only = [], []
    with open(unit, encoding="utf-8") as f:
        for line in f:
            key, _, value = line.strip().partition("=")
            paths = [p.lstrip("-+") for p in value.split()]
            if key == "InaccessiblePaths":
                inaccessible += paths
            elif key == "ReadOnlyPaths":
                read_only += paths
    return inaccessible, read_only


def recv_stamped(sock):
    """(kernel arrival time in seconds, text) of one datagram; SO_TIMESTAMP must be on."""
    data, ancdata, _, _ = sock.recvmsg(4096, socket.CMSG_SPACE(16))
    stamp = time.time()
    for level, kind, payload in ancdata:
        if level == socket.SOL_SOCKET and kind == SO_TIMESTAMP and len(payload) >= 16:
            sec, usec = struct.unpack("qq", payload[:16])
            stamp = sec + usec / 1e6
    return stamp, data.decode("utf-8", "replace")


def scrape_every_3s(port, stop):
    while not stop.wait(3):
        try:
            lib.http_get(f"http://127.0.0.1:{port}/metrics", 2)
        except OSError:
            pass


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--hucprof", required=True)
    ap.add_argument("--flood", required=True)
    ap.add_argument("--unit", default=os.path.join(REPO, "deploy", "hucprof.service"))
    args = ap.parse_args()
    reasons = []
    if os.geteuid() != 0:
        reasons.append("needs root (bpf + perf_event_open)")
    for tool in ("strace", "systemd-analyze"):
        if not shutil.which(tool):
            reasons.append(f"{tool} not installed")
    for what, path in (("hucprof", args.hucprof), ("huc_udp_flood", args.flood)):
        if not os.access(path, os.X_OK):
            reasons.append(f"{what} binary missing at {path}")
    if (rc := lib.skip_unless_ready("unit runtime", reasons)) is not None:
        return rc

    checks = lib.Checklist(show_ok_detail=True)
    check = checks.check

    with tempfile.TemporaryDirectory(prefix="hucprof-unit-") as tmp:
        notify_path = os.path.join(tmp, "notify")
        sock = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
        sock.bind(notify_path)
        sock.settimeout(0.2)
        # The kernel stamps each datagram on arrival: ping gaps are measured from those stamps,
        # not from when this (CPU-starved, flood-sharing) script gets around to reading them.
        sock.setsockopt(socket.SOL_SOCKET, SO_TIMESTAMP, 1)
        trace = os.path.join(tmp, "strace.txt")
        port = lib.free_port()
        env = dict(os.environ, NOTIFY_SOCKET=notify_path, WATCHDOG_USEC=str(WATCHDOG_USEC))
        env.pop("WATCHDOG_PID", None)
        flood = lib.Flood(args.flood, seconds=RUN_SECONDS + 20, workdir=tmp)
        flood.start()
        log_path = os.path.join(tmp, "hucprof.log")
        log = open(log_path, "wb")
        proc = subprocess.Popen(["strace", "-f", "-qq", "-o", trace, args.hucprof, "run", "--config",
                                 os.path.join(REPO, "deploy", "hucprof.yaml"), "--mode", "auto",
                                 "--interval", "1s", "--web.listen-address", f"127.0.0.1:{port}"],
                                stdout=log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL, env=env)
        stop_scraping = threading.Event()
        messages: list[tuple[float, str]] = []
        ready_at = None
        metrics_at_ready = None
        start = time.monotonic()
        while time.monotonic() - start < RUN_SECONDS + 20 and proc.poll() is None:
            try:
                stamp, data = recv_stamped(sock)
            except socket.timeout:
                data = None
            now = time.monotonic()
            if data:
                for m in data.split("\n"):
                    if m:
                        messages.append((stamp, m))
                if "READY=1" in data.split("\n") and ready_at is None:
                    ready_at = now
                    try:
                        status, _ = lib.http_get(f"http://127.0.0.1:{port}/metrics", 5)
                        metrics_at_ready = status
                    except OSError as e:
                        metrics_at_ready = str(e)
                    # Scrapes during the run come from another thread: a slow scrape of the
                    # traced daemon must not delay reading (and timestamping) its pings.
                    threading.Thread(target=scrape_every_3s, args=(port, stop_scraping),
                                     daemon=True).start()
            if ready_at is not None and now - ready_at > RUN_SECONDS:
                break
        stop_scraping.set()
        # SIGTERM the traced daemon itself (strace's child); strace then exits with its status.
        rc = None
        children: list[str] = []
        try:
            children = subprocess.run(["ps", "-o", "pid=", "--ppid", str(proc.pid)], capture_output=True,
                                      text=True).stdout.split()
            for pid in children:
                os.kill(int(pid), signal.SIGTERM)
            rc = proc.wait(timeout=15)
        except subprocess.TimeoutExpired:
            for pid in children:
                try:
                    os.kill(int(pid), signal.SIGKILL)
                except ProcessLookupError:
                    pass
            proc.kill()
            proc.wait()
        # Drain the last messages (STOPPING=1).
        end = time.monotonic() + 1
        while time.monotonic() < end:
            try:
                stamp, data = recv_stamped(sock)
                messages.extend((stamp, m) for m in data.split("\n") if m)
            except socket.timeout:
                break
        sock.close()
        flood.stop()
        log.close()
        with open(log_path, encoding="utf-8", errors="replace") as f:
            daemon_log = f.read()

        kinds = [m for _, m in messages]
        check(ready_at is not None, "sd_notify READY=1 received", "" if ready_at else daemon_log[-800:])
        check(metrics_at_ready == 200, "/metrics answers when READY=1 arrives", f"got {metrics_at_ready}")
        pings = [t for t, m in messages if m == "WATCHDOG=1"]
        gaps = [b - a for a, b in zip(pings, pings[1:])]
        check(len(pings) >= RUN_SECONDS * 1_000_000 // WATCHDOG_USEC,
              f"WATCHDOG=1 pings with WATCHDOG_USEC={WATCHDOG_USEC}", f"{len(pings)} pings")
        check(bool(gaps) and max(gaps) <= WATCHDOG_USEC / 1e6,
              "no watchdog gap longer than WatchdogSec", f"max gap {max(gaps):.2f} s" if gaps else "no pings")
        print(f"     notify messages seen: {sorted(set(k.split('=')[0] for k in kinds))}")
        check(rc == 0, "exit 0 on SIGTERM (strace passes the daemon's exit code on)", f"exit {rc}")

        # System calls against the unit's filter; opened files against its file-system sandbox.
        used = set()
        written, opened = set(), set()
        with open(trace, encoding="utf-8", errors="replace") as f:
            for line in f:
                m = re.match(r"^\d+\s+([a-z_0-9]+)\(", line)
                if m:
                    used.add(m.group(1))
                o = re.match(r'^\d+\s+openat\([^,]+, "([^"]+)", ([A-Z_|]+)', line)
                if o and "= -1" not in line:
                    opened.add(o.group(1))
                    if re.search(r"O_WRONLY|O_RDWR|O_CREAT", o.group(2)):
                        written.add(o.group(1))
        inaccessible, read_only = unit_paths(args.unit)
        check(not written, "opens no file for writing (ProtectSystem=strict, ReadOnlyPaths=)",
              " ".join(sorted(written)))
        hidden = sorted(p for p in opened if any(p == h or p.startswith(h + "/") for h in inaccessible))
        check(not hidden, "opens nothing the unit makes inaccessible (InaccessiblePaths=)", " ".join(hidden))
        kernel_files = sorted(p for p in opened if p.startswith(("/proc/", "/sys/", "/boot/")))
        print(f"     kernel files read: {' '.join(kernel_files)}")
        groups = lib.systemd_syscall_groups()
        allowed = lib.unit_allowed_syscalls(args.unit, groups)
        # execve of hucprof itself happens before the filter applies (systemd installs it first,
        # but execve is in @default anyway); strace's own calls are not in the trace.
        outside = sorted(used - allowed)
        check(bool(used), "strace saw the daemon's system calls", f"{len(used)} distinct calls")
        check(not outside, "every system call is allowed by the unit's SystemCallFilter=",
              f"{len(used)} distinct: {' '.join(sorted(used))}" if not outside else
              f"not allowed: {' '.join(outside)}")
    return checks.finish()


if __name__ == "__main__":
    sys.exit(main())
