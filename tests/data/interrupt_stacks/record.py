#!/usr/bin/env python3
"""Records the stack set of tests/unit/core/sample_scan_test.cpp (root, perf, this kernel).

`perf record -a -g` during a UDP flood whose datagrams reach the receiver's CPU as IPIs (receive
packet steering on lo, put back afterwards), so softirqs land inside its usercopy checks. Every
stack with a check dispatcher or an interrupt entry in its first 24 frames is kept (at most
--keep of each verdict), with the verdict tests/lib/perf_stacks.py gives it from perf's names and
/proc/kallsyms, and the kallsyms lines the test needs to rebuild the address ranges: the section
markers, the named entry functions and dispatchers, every frame's symbol, each with the symbol
after it (kallsyms sizes are distances to the next symbol).

  sudo tests/data/interrupt_stacks/record.py --flood build/tests/tools/huc_udp_flood \\
      --out tests/data/interrupt_stacks/$(uname -r).txt
"""

import argparse
import bisect
import os
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "lib"))
import perf_stacks as ps  # noqa: E402

RPS = "/sys/class/net/lo/queues/rx-0/rps_cpus"


def kallsyms_text_lines():
    lines = []
    with open("/proc/kallsyms") as f:
        for line in f:
            parts = line.split()
            if len(parts) == 3 and parts[1] in "tTwW":  # vmlinux only
                lines.append((int(parts[0], 16), line.rstrip("\n")))
    lines.sort()
    return lines


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--flood", required=True)
    ap.add_argument("--out", required=True)
    ap.add_argument("--seconds", type=int, default=20)
    ap.add_argument("--keep", type=int, default=60)
    a = ap.parse_args()
    with open(RPS) as f:
        rps_before = f.read().strip()
    with tempfile.TemporaryDirectory() as tmp:
        data = os.path.join(tmp, "perf.data")
        try:
            with open(RPS, "w") as f:
                f.write("2")
            flood = subprocess.Popen([a.flood, "--seconds", str(a.seconds + 2), "--payload", "64",
                                      "--senders", "2", "--receiver-cpu", "1", "--sender-cpu", "0"])
            subprocess.run(["perf", "record", "-q", "-a", "-g", "-F", "999", "-o", data, "--",
                            "sleep", str(a.seconds)], check=True)
            flood.wait()
        finally:
            with open(RPS, "w") as f:
                f.write(rps_before)
        stacks = ps.perf_kernel_stacks(data)
    symbols = ps.KernelSymbols()
    kept = {"check": [], "interrupt_in_check": [], "outside": []}
    for _, frames in stacks:
        verdict = ps.classify(frames, symbols)
        scan = frames[:ps.SCAN_DEPTH]
        has_entry = any(ps.is_interrupt_entry(addr, name, symbols) for addr, name in scan)
        if verdict == "outside" and not has_entry:
            continue
        if len(kept[verdict]) < a.keep:
            kept[verdict].append(frames)
    lines = kallsyms_text_lines()
    addrs = [addr for addr, _ in lines]
    wanted = set()

    def want_at(addr):  # the symbol holding addr, and the one after it
        i = bisect.bisect_right(addrs, addr) - 1
        if i >= 0:
            wanted.update({i, i + 1})

    by_name = {}
    for i, (_, line) in enumerate(lines):
        by_name.setdefault(line.split()[2], []).append(i)
    for name, idx in by_name.items():
        n = ps.normalize(name)
        if (n in ps.DISPATCHERS or n in ps.ENTRY_FUNCTIONS or name.startswith(ps.ENTRY_PREFIXES)
                or any(name in pair for pair in ps.SECTIONS)):
            for i in idx:
                wanted.update({i, i + 1})
    for frames in sum(kept.values(), []):
        for addr, _ in frames:
            want_at(addr)
    with open(a.out, "w") as out:
        out.write("# Recorded by tests/data/interrupt_stacks/record.py on %s; verdicts by "
                  "tests/lib/perf_stacks.py from perf's names.\n# kallsyms\n" % os.uname().release)
        for i in sorted(w for w in wanted if w < len(lines)):
            out.write(lines[i][1] + "\n")
        out.write("# stacks: verdict, then the frames leaf first (address:name)\n")
        for verdict, group in kept.items():
            for frames in group:
                out.write(verdict + " " + " ".join("%x:%s" % f for f in frames) + "\n")
    print({k: len(v) for k, v in kept.items()})


if __name__ == "__main__":
    main()
