#!/usr/bin/env python3
"""Cuts a kernel's System.map (or /proc/kallsyms) down to what tests/unit/core/
interrupt_entries_test.cpp needs, with the symbol after each kept one (sizes are distances to the
next symbol): the section markers, every interrupt entry function and prefix of
tests/lib/perf_stacks.py, the check dispatchers, and the witnesses below, which sit right next to
interrupt entry code but are not. The System.maps of Debian's kernels come from their
linux-image-VERSION-dbg packages (usr/lib/debug/boot/System.map-VERSION; the linux-image package
holds a placeholder).

  excerpt.py System.map-6.1.0-57-amd64 > System.map-6.1.0-57-amd64.excerpt
"""

import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "lib"))
import perf_stacks as ps  # noqa: E402

WITNESSES = {"entry_SYSCALL_64", "entry_SYSCALL_64_after_hwframe", "do_syscall_64",
             "common_interrupt_return", "udp_recvmsg", "__virt_addr_valid", "el0t_64_sync",
             "el0_svc", "invoke_syscall", "ret_to_user", "__entry_text_start",
             "gic_handle_irq", "irq_entries_start"}  # the last two: inside a section only


def main():
    lines = []
    with open(sys.argv[1]) as f:
        for line in f:
            parts = line.split()
            if len(parts) == 3 and parts[1] in "tTwW":
                lines.append((int(parts[0], 16), parts[2], line.rstrip("\n")))
    lines.sort(key=lambda x: x[0])
    keep = set()
    markers = {name for pair in ps.SECTIONS for name in pair}
    for i, (_, name, _) in enumerate(lines):
        n = ps.normalize(name)
        if (name in markers or name in WITNESSES or n in ps.DISPATCHERS or n in ps.ENTRY_FUNCTIONS
                or name.startswith(ps.ENTRY_PREFIXES)):
            keep.update({i, i + 1})
    for i in sorted(k for k in keep if k < len(lines)):
        print(lines[i][2])


if __name__ == "__main__":
    main()
