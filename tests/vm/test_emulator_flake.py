#!/usr/bin/env python3
"""vmlib.emulator_flake on a real console: the 6.12 guest that died of "Oops: int3" in
ttwu_do_activate under TCG (tests/vm/testdata/console-6.12-oops-int3.txt) is a flake worth one
more boot; the same Oops with a BPF program on its stack, or any other death, is not."""

import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
sys.dont_write_bytecode = True
import vmlib  # noqa: E402

failures = []


def check(cond: bool, what: str) -> None:
    print(("ok   " if cond else "FAIL ") + what)
    if not cond:
        failures.append(what)


real = (HERE / "testdata" / "console-6.12-oops-int3.txt").read_text()
why = vmlib.emulator_flake(real)
check(why is not None and "ttwu_do_activate" in why, f"real int3 Oops is a flake: {why}")
ours = real.replace(" sched_ttwu_pending+0xe3/0x180",
                    " bpf_prog_4f1c2a_huc_kprobe_check_object_size+0x1e2/0x3a0")
check(vmlib.emulator_flake(ours) is None, "the same Oops with a BPF program on its stack is not")
general = real.replace("Oops: int3: 0000", "Oops: general protection fault: 0000")
check(vmlib.emulator_flake(general) is None, "a general protection fault is not")
check(vmlib.emulator_flake("HUCVM-FAIL: mount /proc\n") is None, "an init failure is not")
sys.exit(1 if failures else 0)
