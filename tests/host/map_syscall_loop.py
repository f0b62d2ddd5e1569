#!/usr/bin/env python3
"""Holds the kernel's bpf_prog_active on one CPU as often as it can: pinned to CPU, looks up the
one 64 KiB value of a BPF array map of its own in a loop for SECONDS. The kernel copies the
value with BPF instrumentation disabled on the CPU (kernel/bpf/syscall.c,
bpf_disable_instrumentation), so every perf_event BPF program due there meanwhile is skipped.

    map_syscall_loop.py CPU SECONDS        prints the lookups it made
"""

import ctypes
import os
import sys
import time

NR_BPF = {"x86_64": 321, "aarch64": 280}[os.uname().machine]
BPF_MAP_CREATE, BPF_MAP_LOOKUP_ELEM = 0, 1
BPF_MAP_TYPE_ARRAY = 2
VALUE_SIZE = 64 * 1024
ATTR_SIZE = 128  # larger than every field used; the kernel wants the rest zero

libc = ctypes.CDLL(None, use_errno=True)
libc.syscall.restype = ctypes.c_long


def bpf(cmd, attr):
    ret = libc.syscall(NR_BPF, cmd, ctypes.byref(attr), ctypes.sizeof(attr))
    if ret < 0:
        err = ctypes.get_errno()
        raise OSError(err, "bpf(%d): %s" % (cmd, os.strerror(err)))
    return ret


def main():
    cpu, seconds = int(sys.argv[1]), float(sys.argv[2])
    os.sched_setaffinity(0, {cpu})
    create = ctypes.create_string_buffer(ATTR_SIZE)
    # union bpf_attr, BPF_MAP_CREATE: map_type, key_size, value_size, max_entries (u32 each).
    ctypes.memmove(create, (ctypes.c_uint32 * 4)(BPF_MAP_TYPE_ARRAY, 4, VALUE_SIZE, 1), 16)
    map_fd = bpf(BPF_MAP_CREATE, create)
    key = ctypes.c_uint32(0)
    value = ctypes.create_string_buffer(VALUE_SIZE)
    lookup = ctypes.create_string_buffer(ATTR_SIZE)
    # BPF_MAP_LOOKUP_ELEM: map_fd (u32), pad, key (u64 pointer), value (u64 pointer).
    ctypes.memmove(lookup, (ctypes.c_uint64 * 3)(map_fd, ctypes.addressof(key),
                                                 ctypes.addressof(value)), 24)
    lookups = 0
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        for _ in range(1000):
            bpf(BPF_MAP_LOOKUP_ELEM, lookup)
        lookups += 1000
    print(lookups)
    return 0


if __name__ == "__main__":
    sys.exit(main())
