#!/usr/bin/env python3
"""A long run with many distinct kernel stacks: does the daemon stay small, and do the BPF maps
keep up (no stack_collision, no *_map_full) once it has settled?

Real usercopy checks are too rare a part of CPU time to give ten thousand distinct stacks in
minutes (a varied syscall workload gave ~160 distinct in-check stacks in 30 s), so this drives the
real sampler program with a wider net: hucprof reads a copy of /proc/kallsyms in which
do_syscall_64 and the softirq/kthread entry points are *also* named check_heap_object (a check
dispatcher). The sampler then keeps every kernel sample taken in a syscall, softirq or kernel
thread, each under its full stack: thousands of distinct stacks a minute from
huc_usercopy_paths (bench/usercopy_paths.cpp) plus whatever else runs. Everything else is the
real daemon: real BPF program, map rotation, symbolizer, folder, aggregator.

Distinct stacks are counted independently of the daemon: the stack map's keys (content hashes)
are listed through bpf(2) every second and collected; stacks inserted and deleted between two
polls are missed, so the count is a lower bound.

  sudo bench/many_stacks.py --hucprof build/daemon/hucprof \\
      --paths build/bench/huc_usercopy_paths [--minutes 10] [--frequency 999] [--interval 10s]
"""
import argparse
import ctypes
import json
import os
import re
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "tests", "lib"))
import hucprof_testlib as t  # noqa: E402

# Where a kernel stack starts for syscalls, softirqs and kernel threads.
ENTRY_POINTS = ("do_syscall_64", "handle_softirqs", "__do_softirq", "worker_thread",
                "kthread", "ret_from_fork")
DISPATCHER_ALIAS = "check_heap_object"

SYS_BPF = 321  # x86_64
BPF_MAP_GET_NEXT_KEY = 4
BPF_MAP_GET_FD_BY_ID = 14
STACK_KEY_SIZE = 16  # struct huc_stack_key

libc = ctypes.CDLL(None, use_errno=True)
libc.syscall.restype = ctypes.c_long


def bpf(cmd, attr):
    return libc.syscall(SYS_BPF, cmd, ctypes.byref(attr), ctypes.sizeof(attr))


class GetFdAttr(ctypes.Structure):
    _fields_ = [("map_id", ctypes.c_uint32), ("next_id", ctypes.c_uint32),
                ("open_flags", ctypes.c_uint32)]


class NextKeyAttr(ctypes.Structure):
    _fields_ = [("map_fd", ctypes.c_uint32), ("pad", ctypes.c_uint32),
                ("key", ctypes.c_uint64), ("next_key", ctypes.c_uint64),
                ("flags", ctypes.c_uint64)]


def map_fd(map_id):
    fd = bpf(BPF_MAP_GET_FD_BY_ID, GetFdAttr(map_id, 0, 0))
    if fd < 0:
        raise OSError(ctypes.get_errno(), "BPF_MAP_GET_FD_BY_ID %d" % map_id)
    return fd


def stack_ids(fd):
    """The content ids (first 8 bytes of each huc_stack_key) in a stack map right now."""
    ids = set()
    key = ctypes.create_string_buffer(STACK_KEY_SIZE)
    nxt = ctypes.create_string_buffer(STACK_KEY_SIZE)
    attr = NextKeyAttr(fd, 0, 0, ctypes.addressof(nxt), 0)
    while bpf(BPF_MAP_GET_NEXT_KEY, attr) == 0:
        ids.add(int.from_bytes(nxt.raw[:8], "little"))
        ctypes.memmove(key, nxt, STACK_KEY_SIZE)
        attr.key = ctypes.addressof(key)
    return ids


def find_map(pid, name):
    held = t.held_bpf_ids(pid, "map")
    listing = json.loads(subprocess.run(["bpftool", "-j", "map", "show"], capture_output=True,
                                        text=True, check=True).stdout)
    for m in listing:
        if m["id"] in held and m["name"] == name:
            return m["id"]
    raise RuntimeError("the daemon holds no map named %s" % name)


def widened_kallsyms(path):
    aliases = []
    with open("/proc/kallsyms") as src, open(path, "w") as out:
        for line in src:
            out.write(line)
            parts = line.split()
            if len(parts) >= 3 and parts[1] in "tT" and parts[2] in ENTRY_POINTS:
                aliases.append("%s t %s\n" % (parts[0], DISPATCHER_ALIAS))
        out.writelines(aliases)  # after the real names: those stay the preferred ones
    return len(aliases)


def status_kib(pid, field):
    with open("/proc/%d/status" % pid) as f:
        return int(re.search(r"%s:\s+(\d+)" % field, f.read()).group(1))


def drops(samples):
    return {labels["reason"]: v for labels, v in t.select(samples, "hucprof_dropped_total")}


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--hucprof", required=True)
    p.add_argument("--paths", required=True, help="huc_usercopy_paths")
    p.add_argument("--minutes", type=float, default=10)
    p.add_argument("--frequency", type=int, default=999)
    p.add_argument("--interval", default="10s")
    p.add_argument("--extra", nargs=argparse.REMAINDER, default=[],
                   help="more `hucprof run` flags, e.g. --bpf.max-stacks 16384")
    a = p.parse_args()
    if not t.is_root():
        print("SKIP: needs root (BPF, perf events, reading the daemon's maps)")
        return 77

    tmp = tempfile.mkdtemp(prefix="hucprof-many-stacks-")
    kallsyms = os.path.join(tmp, "kallsyms")
    n_alias = widened_kallsyms(kallsyms)
    print("kallsyms copy with %d entry points also named %s: %s" % (n_alias, DISPATCHER_ALIAS,
                                                                     kallsyms))
    args = ["--mode", "sample", "--sample-frequency", str(a.frequency), "--interval", a.interval,
            "--kallsyms", kallsyms] + a.extra
    seconds = a.minutes * 60
    seen = set()
    rows = []
    with t.running_daemon(a.hucprof, args, os.path.join(tmp, "hucprof.log")) as d:
        fd = map_fd(find_map(d.proc.pid, "sample_stacks"))
        work = subprocess.Popen([a.paths, "--seconds", str(seconds)], stdout=subprocess.PIPE,
                                text=True)
        start = time.monotonic()
        next_report = start
        at_one_minute = None
        while work.poll() is None:
            seen |= stack_ids(fd)
            now = time.monotonic()
            if now >= next_report:
                samples = t.parse_metrics(d.scrape())
                row = {
                    "t": now - start,
                    "distinct": len(seen),
                    "kept": t.total(samples, "usercopy_cpu_samples_total"),
                    "rss_kib": status_kib(d.proc.pid, "VmRSS"),
                    "hwm_kib": status_kib(d.proc.pid, "VmHWM"),
                    "map_kib": t.total(samples, "hucprof_bpf_map_memory_bytes") / 1024,
                    "drain_ms": 1000 * t.total(samples, "hucprof_drain_duration_seconds"),
                    "drops": drops(samples),
                }
                rows.append(row)
                if at_one_minute is None and row["t"] >= 60:
                    at_one_minute = row
                print("%5.0fs distinct stacks >= %6d, samples kept %8.0f, RSS %6d KiB (peak %6d),"
                      " BPF maps %6.0f KiB, last drain %5.1f ms"
                      % (row["t"], row["distinct"], row["kept"], row["rss_kib"], row["hwm_kib"],
                         row["map_kib"], row["drain_ms"]), flush=True)
                next_report += 30
            time.sleep(1)
        print(work.stdout.read().strip())
        time.sleep(3)  # one more drain
        samples = t.parse_metrics(d.scrape())
        final = {"rss_kib": status_kib(d.proc.pid, "VmRSS"),
                 "hwm_kib": status_kib(d.proc.pid, "VmHWM"), "drops": drops(samples),
                 "kept": t.total(samples, "usercopy_cpu_samples_total")}
    os.close(fd)
    first = at_one_minute or rows[0]
    watched = ("stack_collision", "stack_map_full", "samples_map_full")
    late = {r: final["drops"].get(r, 0) - first["drops"].get(r, 0) for r in watched}
    print("\n== %.0f min at %d Hz, --interval %s %s" % (a.minutes, a.frequency, a.interval,
                                                         " ".join(a.extra)))
    print("distinct kernel stacks stored (lower bound): %d" % len(seen))
    print("samples kept: %.0f" % final["kept"])
    print("daemon RSS at the end %d KiB, peak %d KiB" % (final["rss_kib"], final["hwm_kib"]))
    print("drops after the first minute: %s" % ", ".join("%s=%g" % kv for kv in late.items()))
    print("drops over the whole run: %s" % ", ".join(
        "%s=%g" % (r, final["drops"].get(r, 0)) for r in watched))
    return 0


if __name__ == "__main__":
    sys.exit(main())
