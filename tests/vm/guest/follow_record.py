"""Guest step of the VM tier: `hucprof record --mode probe -- COMMAND` while a noise workload
runs beside it (tests/vm/README.md, "Following a command").

The kernel's reference (refprobe.sh's `ufollow`: a kprobe event inside __check_object_size, past
its ftrace site, with a hist keyed by stack and thread) is armed before the recording starts and
paused after it ended; the noise starts once COMMAND runs (the recording attached before it
started COMMAND) and is stopped after the recording ended. COMMAND is
`sh -c 'echo $$ >PIDFILE; exec ...'`, so its first pid is known and stays the workload's after
exec; its threads are read from /proc/PID/task while it runs (they live until the workload ends).
The host folds the hist's stacks of those threads alone and compares them with the recording's
calls per call site (vm_tier_follow.py).

Files (in $HUCVM_RESULTS): follow.pb.gz follow-record.log follow-record.rc follow-noise.log
follow-noise.rc ("running" when the recording ended) follow-pid.txt follow-tids.txt
hist-ufollow-follow.txt ref-follow-at.txt
"""

from __future__ import annotations

import os
import subprocess
import time
from pathlib import Path


def command_threads(pidfile: Path, record: subprocess.Popen, on_start) -> set[int]:
    """Every thread id of the process whose pid COMMAND's shell wrote to `pidfile`, seen in
    /proc/PID/task until the recording exits; on_start() runs once that pid is known (the
    recording attached before it started COMMAND)."""
    tids: set[int] = set()
    pid = None
    while record.poll() is None:
        if pid is None and pidfile.exists():
            text = pidfile.read_text().strip()
            pid = int(text) if text else None
            if pid is not None:
                on_start()
        if pid is not None:
            try:
                tids.update(int(t) for t in os.listdir(f"/proc/{pid}/task"))
            except FileNotFoundError:
                pass
        time.sleep(0.02)
    if pid is not None:
        tids.add(pid)
    return tids


def run(plan: dict, ref, results: Path, step) -> None:
    follow = plan["follow"]
    pidfile = results / "follow-pid.txt"
    ref.call("ref_cleanup")  # the session probes are done: this one alone keeps the cost down
    ref.call("ref_follow_probe")
    ref.call("ref_start")
    noise = None
    with open(results / "follow-noise.log", "w") as noise_log, \
            open(results / "follow-record.log", "w") as record_log:
        def start_noise():
            # Only once COMMAND runs: beside the recording's attach it would only slow it down.
            nonlocal noise
            noise = subprocess.Popen(follow["noise"], cwd="/tmp", stdout=noise_log,
                                     stderr=subprocess.STDOUT)
            step("follow: COMMAND and the noise started")

        command = ["sh", "-c", f"echo $$ >{pidfile}; exec \"$@\"", "sh", *follow["command"]]
        record = subprocess.Popen([plan["hucprof"], "record", *follow["args"], "-o",
                                   str(results / "follow.pb.gz"), "--", *command],
                                  cwd="/tmp", stdout=record_log, stderr=subprocess.STDOUT)
        step("follow: record started")
        tids = command_threads(pidfile, record, start_noise)
        (results / "follow-record.rc").write_text(f"{record.wait()}\n")
        step("follow: record exit")
        # The noise outlasts COMMAND (its --seconds is far longer): "running" is what the host
        # asserts, then it is stopped.
        if noise is not None:
            (results / "follow-noise.rc").write_text(
                "running\n" if noise.poll() is None else f"{noise.returncode}\n")
            noise.kill()
            noise.wait()
    ref.call("ref_stop", "follow")
    (results / "follow-tids.txt").write_text("".join(f"{t}\n" for t in sorted(tids)))
    step("follow: done")
