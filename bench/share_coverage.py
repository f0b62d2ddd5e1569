#!/usr/bin/env python3
"""Coverage of the sampled share's 95 % interval, on this machine's kernel.

Runs RECORDINGS independent recordings of one steady load: each is its own
`hucprof record --mode sample -F HZ -- huc_udp_flood --seconds S` (a fresh
process, fresh BPF programs, the same loopback flood in a cgroup of its own, so other work on a
shared machine stays out of both counts). huc_share_coverage then gives each recording's share,
its interval (core/cost/share_interval.h, as `hucprof report` takes it) and how many of the intervals
contain the share of all recordings pooled. A 95 % interval should hold it in about 95 % of them;
docs/metrics.md states the figure and the bar (90 %).

Needs root (bpf, perf_event_open). A benchmark, not a test: it shows a figure and asserts
nothing; it takes RECORDINGS x (S + ~2) seconds.

  python3 bench/share_coverage.py --build build [--recordings 60] [--seconds 4] [--frequency 499]
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--build", default="build", help="the build directory")
    ap.add_argument("--recordings", type=int, default=60)
    ap.add_argument("--seconds", type=int, default=4, help="length of each recording's flood")
    ap.add_argument("--frequency", type=int, default=499, help="--sample-frequency of record")
    ap.add_argument("--payload", type=int, default=64)
    ap.add_argument("--keep", action="store_true", help="keep the recordings")
    args = ap.parse_args()
    if os.geteuid() != 0:
        print("needs root (bpf(2) and perf_event_open(2))", file=sys.stderr)
        return 77
    hucprof = os.path.join(args.build, "daemon", "hucprof")
    flood = os.path.join(args.build, "tests", "tools", "huc_udp_flood")
    coverage = os.path.join(args.build, "bench", "huc_share_coverage")
    for path in (hucprof, flood, coverage):
        if not os.access(path, os.X_OK):
            print(f"missing {path}: build it first", file=sys.stderr)
            return 2
    workdir = tempfile.mkdtemp(prefix="hucprof-coverage-")
    files = []
    for i in range(args.recordings):
        out = os.path.join(workdir, f"rec-{i:03d}.pb.gz")
        cmd = [hucprof, "record", "--mode", "sample", "-F", str(args.frequency),
               "--interval", "1s", "--log.level", "warn", "-o", out, "--",
               flood, "--seconds", str(args.seconds), "--payload", str(args.payload)]
        r = subprocess.run(cmd, capture_output=True, text=True, timeout=args.seconds + 120)
        if r.returncode != 0 or not os.path.exists(out):
            print(f"recording {i} failed ({r.returncode}): {r.stderr.strip()[-300:]}",
                  file=sys.stderr)
            return 1
        files.append(out)
        print(f"recorded {i + 1}/{args.recordings}", file=sys.stderr, flush=True)
    r = subprocess.run([coverage, *files], text=True)
    if args.keep:
        print(f"recordings kept in {workdir}")
    else:
        for f in files:
            os.unlink(f)
        os.rmdir(workdir)
    return r.returncode


if __name__ == "__main__":
    sys.exit(main())
