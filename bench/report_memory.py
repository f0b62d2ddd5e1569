#!/usr/bin/env python3
"""`hucprof report` on large and hostile profiles: peak RSS, time and output size, side by side
with another build (--baseline), interleaved. The cases:

  long_names     2 000 samples, each its own 100 KB function name (~0.24 MB gzipped): refused
  many_samples   1.5 M samples over 5 000 stacks of 30 frames (~185 MiB inflated): valid
  at_limits      2 M samples, 65 536 stacks, ~1 M frames, 262 144 functions, 65 536 label sets:
                 accepted, at the edge of every bound at once (the worst an accepted file costs)
  unknown_field  a small valid profile and one field pprof's schema does not have, of 200 MiB
                 (~0.2 MB gzipped): valid, the field skipped as it inflates
  unknown_bomb   the same field of 1 GiB (~1 MB gzipped): refused at 256 MiB inflated

Each is run as `report FILE` and `report --flamegraph OUT FILE`, under an address-space cap
(--cap-mib, default 4096) so a build without bounds fails there instead of taking the machine.
No root needed. The files are made by tests/lib/pprof_files.py in a temporary directory.

  bench/report_memory.py --hucprof build/daemon/hucprof [--baseline OLD] [--rounds 2]
"""

import argparse
import os
import resource
import shutil
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "tests", "lib"))
import pprof_files  # noqa: E402

def with_unknown_field(size):
    small = pprof_files.profile([[0, 1]], [(0, 5)], ["__check_object_size", "udp_recvmsg"])
    return lambda: (len(small) + size, pprof_files.gzipped_with_unknown_field(small, size))


def plain(make):
    def made():
        data = make()
        return len(data), pprof_files.gzipped(data)
    return made


# Each case: () -> (inflated size, the gzipped file).
CASES = {
    "long_names": plain(pprof_files.long_names),
    "many_samples": plain(pprof_files.many_samples),
    "at_limits": plain(pprof_files.at_limits),
    "unknown_field": with_unknown_field(200 << 20),
    "unknown_bomb": with_unknown_field(1 << 30),
}


def run(binary, words, cap_bytes):
    def limit():
        resource.setrlimit(resource.RLIMIT_AS, (cap_bytes, cap_bytes))

    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
        started = time.monotonic()
        proc = subprocess.Popen([binary] + words, stdout=out, stderr=err, preexec_fn=limit)
        _, status, usage = os.wait4(proc.pid, 0)
        seconds = time.monotonic() - started
        out.seek(0, os.SEEK_END)
        err.seek(0)
        last = err.read().decode(errors="replace").strip().splitlines()
        return {"rc": os.waitstatus_to_exitcode(status), "rss_mib": usage.ru_maxrss / 1024,
                "seconds": seconds, "stdout_mb": out.tell() / 1e6,
                "stderr": last[-1][:110] if last else ""}


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--hucprof", required=True)
    p.add_argument("--baseline", help="another hucprof binary, run alternately")
    p.add_argument("--rounds", type=int, default=2)
    p.add_argument("--cap-mib", type=int, default=4096)
    p.add_argument("--cases", default=",".join(CASES))
    args = p.parse_args()
    builds = [("new", args.hucprof)] + ([("baseline", args.baseline)] if args.baseline else [])
    work = tempfile.mkdtemp(prefix="hucprof-report-bench-")
    try:
        for case in args.cases.split(","):
            started = time.monotonic()
            inflated, gz = CASES[case]()
            path = os.path.join(work, case + ".pb.gz")
            with open(path, "wb") as f:
                f.write(gz)
            print("%s: %.1f MiB inflated, %.2f MB gzipped (made in %.0f s)" % (
                case, inflated / 2**20, os.path.getsize(path) / 1e6, time.monotonic() - started),
                flush=True)
            del gz
            for flame in (False, True):
                for round_ in range(args.rounds):
                    for name, binary in builds:
                        svg = os.path.join(work, "out.svg")
                        words = ["report"] + (["--flamegraph", svg] if flame else []) + [path]
                        r = run(binary, words, args.cap_mib << 20)
                        svg_mb = os.path.getsize(svg) / 1e6 if os.path.exists(svg) else 0
                        if os.path.exists(svg):
                            os.unlink(svg)
                        print("  %-9s %-11s round %d: rc %3d  peak RSS %7.1f MiB  %6.1f s  "
                              "stdout %7.2f MB  svg %6.2f MB  %s" % (
                                  name, "--flamegraph" if flame else "text", round_ + 1, r["rc"],
                                  r["rss_mib"], r["seconds"], r["stdout_mb"], svg_mb, r["stderr"]),
                              flush=True)
            os.unlink(path)
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
