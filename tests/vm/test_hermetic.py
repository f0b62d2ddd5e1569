#!/usr/bin/env python3
"""The VM tests' guests get what their test gives them, not what the host has: every hucprof a
VM test starts names its kernel debuginfo (no VM is booted; ~1 s).

The x86 guests see the host's root over 9p, so a hucprof left to its default search would read
the host's /usr/lib/debug (a user's machine may hold the -dbg package of the very kernel the tier
boots) and the tier would check other profiles there than on a clean machine. So: every session
of every vm_tier plan, for every kernel and run, passes `--debuginfo.path none` to doctor and to
run (and to the doctor-only runs and the followed command's `record`); every session of tests/vm/debuginfo's plan passes a
--debuginfo.path of its own; every
doctor and run of the arm64 guest's /init passes one. (vm_systemd's guest has a clean Debian root
of its own: its hucprof sees nothing of the host's /usr/lib/debug.)

Usage: test_hermetic.py          Exit: 0 pass, 1 fail.
"""

import re
import sys
from pathlib import Path

sys.dont_write_bytecode = True  # keep the source tree clean
HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(HERE / "debuginfo"))
sys.path.insert(0, str(HERE.parent / "lib"))

FLAG = "--debuginfo.path"


def debuginfo_of(argv):
    """The value of the one --debuginfo.path in argv, or why there is not exactly one."""
    at = [i for i, a in enumerate(argv) if a == FLAG or a.startswith(FLAG + "=")]
    if len(at) != 1:
        return None, f"{len(at)} {FLAG} flags in {argv}"
    i = at[0]
    if "=" in argv[i]:
        return argv[i].split("=", 1)[1], ""
    return (argv[i + 1], "") if i + 1 < len(argv) else (None, f"{FLAG} without a value")


def session_problems(where, sessions, wanted=None):
    """Every session's run and doctor (if any) name their debuginfo (`wanted`, if given)."""
    problems = []
    for s in sessions:
        for what, argv in (("run", s.get("args")), ("doctor", s.get("doctor"))):
            if argv is None:
                continue
            value, why = debuginfo_of(argv)
            if value is None:
                problems.append(f"{where} {s['name']}: hucprof {what}: {why}")
            elif wanted is not None and value != wanted:
                problems.append(f"{where} {s['name']}: hucprof {what}: {FLAG} {value}, "
                                f"not {wanted}")
    return problems


def vm_tier_problems():
    import json
    from tier_kernels import KERNELS
    from vm_tier_model import Tools
    from vm_tier_runs import plan_json, runs_for
    tools = Tools(*(Path(f"/build/{name}") for name in Tools.__dataclass_fields__))
    problems, sessions = [], 0
    for spec in KERNELS:
        for run in runs_for(spec, tools):
            plan = json.loads(plan_json(run, tools))
            # Doctor-only runs start hucprof too.
            extra = [{"name": name, "args": None, "doctor": flags}
                     for name, flags in (plan.get("doctors") or {}).items()]
            if plan.get("follow"):  # and the recording of a followed command
                extra.append({"name": "follow", "args": plan["follow"]["args"]})
            sessions += len(plan["sessions"]) + len(extra)
            problems += session_problems(f"vm_tier {spec.label} {run.name}",
                                         plan["sessions"] + extra, "none")
    return problems, sessions


def debuginfo_vm_problems():
    import debuginfo_vm
    tools = debuginfo_vm.Tools(*(Path(f"/build/{name}")
                                 for name in debuginfo_vm.Tools.__dataclass_fields__))
    plan = debuginfo_vm.plan(tools, Path("/dbg"), Path("/other/vmlinux"))
    return session_problems("debuginfo_vm", plan["sessions"]), len(plan["sessions"])


# A line of the arm64 /init that starts hucprof doctor or run (directly or through start_run).
ARM64_START = re.compile(r"\(hucprof (doctor|run)\b|^\s*(?:if !? ?)?start_run\b|\bif start_run\b")


def arm64_problems():
    problems, starts = [], 0
    for n, line in enumerate((HERE / "arm64" / "init.sh").read_text().splitlines(), 1):
        code = line.split("#", 1)[0]
        if not ARM64_START.search(code) or code.strip().startswith("start_run()"):
            continue
        if '"$@"' in code:  # start_run's own body: its callers pass the flag
            continue
        starts += 1
        if not re.search(r"\$(nodbg|dbg|dbgargs)\b|" + re.escape(FLAG), code):
            problems.append(f"arm64/init.sh:{n}: hucprof without {FLAG}: {line.strip()}")
    return problems, starts


def problems():
    """[problem], and how many sessions or starts were looked at, per test."""
    out, counts = [], {}
    for name, check in (("vm_tier", vm_tier_problems), ("debuginfo_vm", debuginfo_vm_problems),
                        ("arm64", arm64_problems)):
        found, n = check()
        out += found
        counts[name] = n
    return out, counts


def main():
    found, counts = problems()
    for p in found:
        print(f"FAIL {p}")
    looked = ", ".join(f"{name}: {n}" for name, n in counts.items())
    if any(n == 0 for n in counts.values()):
        print(f"FAIL: nothing looked at in some test ({looked})")
        return 1
    print(f"{'PASS' if not found else 'FAIL'}: hucprof's debuginfo given explicitly ({looked})")
    return 1 if found else 0


if __name__ == "__main__":
    sys.exit(main())
