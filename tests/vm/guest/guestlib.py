"""Guest-side helpers of the VM tier (run inside the guest's chroot of the host root, python3
standard library + tests/lib/hucprof_testlib.py).

- RefProbe drives guest/refprobe.sh (the kernel-only reference: kprobe events + hist triggers)
  through one long-lived bash, so the reference code exists once, in shell, and Python scripts
  can arm and read it around their workloads.
- HucprofRun is a `hucprof run` whose metrics are only read after a drain that began after
  everything of interest happened (the daemon drains its BPF maps every --interval; a scrape in
  between would miss the tail of a workload).
- bpf_stats_enabled / bpf_prog_runs / prog_runs_since: what each of hucprof's BPF programs
  costs, as the kernel counts it (the benches in bench/vm/).
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import subprocess
import sys
import threading
import time
from pathlib import Path

GUEST = Path(__file__).resolve().parent
sys.path.insert(0, str(GUEST.parents[1] / "lib"))
import hucprof_testlib as tl  # noqa: E402

_DONE = "__hucvm_ref_done"


class RefError(RuntimeError):
    pass


class RefProbe:
    """`refprobe.sh` functions called one at a time in a persistent bash (their state —
    registered probes, triggers — lives in that shell). A failing ref_* function exits the shell;
    that surfaces here as RefError with its stderr."""

    def __init__(self, results: Path):
        self.results = results
        self._err_path = results / "ref-stderr.txt"
        self._err = open(self._err_path, "a")
        script = (f". '{GUEST / 'refprobe.sh'}'\n"
                  f"while IFS= read -r line; do eval \"$line\"; echo \"{_DONE} $?\"; done\n")
        self.proc = subprocess.Popen(["bash", "-c", script], stdin=subprocess.PIPE,
                                     stdout=subprocess.PIPE, stderr=self._err, text=True,
                                     cwd=results, env=dict(os.environ, HUCVM_RESULTS=str(results)))

    def call(self, *words: str) -> None:
        line = " ".join("'" + w.replace("'", "'\\''") + "'" for w in words)
        try:
            self.proc.stdin.write(line + "\n")
            self.proc.stdin.flush()
        except BrokenPipeError:
            raise RefError(f"reference shell is gone before {words[0]}: {self.stderr()}") from None
        out = self.proc.stdout.readline()
        if not out.startswith(_DONE):
            raise RefError(f"{words[0]} failed: {self.stderr()}")
        rc = int(out.split()[1])
        if rc != 0:
            raise RefError(f"{words[0]} returned {rc}: {self.stderr()}")

    def stderr(self) -> str:
        self._err.flush()
        return self._err_path.read_text().strip()[-2000:]

    def close(self) -> None:
        if self.proc.poll() is None:
            try:
                self.call("ref_cleanup")
            except RefError:
                pass
            self.proc.stdin.close()
            self.proc.wait(timeout=30)
        self._err.close()


class HucprofRun:
    """A `hucprof run` (tl.Daemon) plus drain-aware scraping."""

    def __init__(self, binary: str, args: list[str], log_path: Path, port: int | None = None):
        self.daemon = tl.Daemon(binary, args, str(log_path), port)

    def metrics(self) -> tuple[str, list]:
        text = self.daemon.scrape()
        return text, tl.parse_metrics(text)

    def drains(self) -> float:
        return tl.total(self.metrics()[1], "hucprof_drains_total")

    def wait_ready(self, timeout: float = 90) -> None:
        """Ready = at least one drain after start-up (tl.Daemon.wait_ready): the daemon binds its
        port before it attaches and serves an empty page meanwhile."""
        self.daemon.wait_ready(timeout=timeout)

    def scrape_after_drain(self, path: Path | None = None, timeout: float = 60) -> str:
        """Scrape once two more drains have completed: the first of them may have begun before
        this call, the second began after it, so everything the kernel counted before this call
        is in the scrape. With the kernel's debuginfo, also once no stack waits for its lines:
        the copy series have caught up with the checks then."""
        target = self.drains() + 2
        deadline = time.monotonic() + timeout
        while True:
            text, samples = self.metrics()
            if (tl.total(samples, "hucprof_drains_total") >= target
                    and tl.total(samples, "hucprof_debuginfo_held_stacks") == 0):
                break
            if self.daemon.proc.poll() is not None:
                raise RuntimeError(f"hucprof exited with {self.daemon.proc.returncode}")
            if time.monotonic() > deadline:
                raise RuntimeError(f"hucprof drained fewer than 2 times, or stacks still waited "
                                   f"for their debuginfo lines, after {timeout:.0f}s")
            time.sleep(0.2)
        if path is not None:
            path.write_text(text)
        return text

    def stop(self) -> int:
        return self.daemon.stop(timeout=30)


def uptime() -> float:
    with open("/proc/uptime") as f:
        return float(f.read().split()[0])


CGROUP_ROOT = Path("/sys/fs/cgroup")


def make_cgroup(name: str) -> Path:
    """A cgroup v2 child of the root, mounting the unified hierarchy first where nothing did (the
    guest has no init system); before any daemon starts, so that its first look finds both."""
    if not (CGROUP_ROOT / "cgroup.procs").exists():
        subprocess.run(["mount", "-t", "cgroup2", "none", str(CGROUP_ROOT)], check=True)
    path = CGROUP_ROOT / name
    path.mkdir(exist_ok=True)
    return path


def run_workload(argv: list[str], log_path: Path, timeout: float = 180,
                 cpus: list[int] | None = None) -> int:
    """Run one workload (cwd /tmp; on `cpus` only, if given), output to log_path; return its exit
    status (-9 on timeout)."""
    pin = (lambda: os.sched_setaffinity(0, cpus)) if cpus else None
    with open(log_path, "w") as log:
        try:
            return subprocess.run(argv, cwd="/tmp", stdout=log, stderr=subprocess.STDOUT,
                                  timeout=timeout, preexec_fn=pin).returncode
        except subprocess.TimeoutExpired:
            log.write(f"\nhucvm: workload timed out after {timeout:.0f}s\n")
            return -9


@contextlib.contextmanager
def bpf_stats_enabled():
    """kernel.bpf_stats_enabled=1 for the block: the kernel counts each program's runs and run
    time (it costs two clock reads per run, so only around what measures it)."""
    stats = Path("/proc/sys/kernel/bpf_stats_enabled")
    stats.write_text("1\n")
    try:
        yield
    finally:
        stats.write_text("0\n")


def bpf_prog_runs() -> dict[str, tuple[int, int]]:
    """hucprof's BPF programs (huc_*) by name: (runs, run time in ns) so far (bpftool)."""
    r = subprocess.run(["bpftool", "-j", "prog", "show"], capture_output=True, text=True,
                       check=True)
    return {p["name"]: (p.get("run_cnt", 0), p.get("run_time_ns", 0))
            for p in json.loads(r.stdout) if p.get("name", "").startswith("huc_")}


def prog_runs_since(before: dict[str, tuple[int, int]]) -> dict[str, list[int]]:
    """[runs, ns] of each huc_ program since `before` (a bpf_prog_runs())."""
    after = bpf_prog_runs()
    return {n: [runs - before.get(n, (0, 0))[0], ns - before.get(n, (0, 0))[1]]
            for n, (runs, ns) in after.items()}


# The slab reference (tests/vm/README.md, "Slab objects"): bpftrace's kfunc on
# __check_heap_object counts the checks of slab objects by cache, direction and kernel stack; the
# host folds the stacks to call sites with hucprof's CallsiteFolder, as it does the hist
# reference's.
# bpftrace 0.17 honours a SIGINT only while it blocks in epoll_wait: one that comes before its
# event loop, or while it handles an event, is never acted on (on the host, 4 of 10 SIGINTs sent
# right after the BEGIN line hung bpftrace for good). So the guest stops it from inside: its own
# getppid() makes the probe call exit(), which the event loop always finishes on. The BEGIN line
# comes from the event loop too, so after every probe is attached ("Attaching 3 probes..." comes
# before the programs are even loaded).
SLAB_REF_ATTACHED = "hucvm-slabref-attached"
SLAB_REF_SCRIPT = (f'BEGIN {{ printf("{SLAB_REF_ATTACHED}\\n"); }} '
                   "kfunc:__check_heap_object "
                   "{ @[str(args->slab->slab_cache->name), args->to_user, kstack] = count(); } "
                   "tracepoint:syscalls:sys_enter_getppid /pid == $1/ { exit(); }")


class SlabRef:
    """bpftrace running SLAB_REF_SCRIPT from start() (it returns once bpftrace's probes are
    attached) to stop() (this process's getppid(): bpftrace detaches, prints the map and exits),
    its output in out_path. Start and stop it from the same process."""

    def __init__(self, out_path: Path, attach_timeout: float = 240):
        bpftrace = shutil.which("bpftrace") or "/usr/bin/bpftrace"
        self.out_path = out_path
        self.out = open(out_path, "w")
        # Line-buffered (-B line): each line reaches the pipe when printed.
        self.proc = subprocess.Popen([bpftrace, "-B", "line", "-e", SLAB_REF_SCRIPT,
                                      str(os.getpid())],
                                     stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        started = time.monotonic()
        # The workload waits for the BEGIN line; a bpftrace that never prints it is killed.
        self._copy_output(attach_timeout, until=SLAB_REF_ATTACHED)
        self.out.write(f"hucvm-bpftrace-attach-seconds {time.monotonic() - started:.0f}\n")
        self.out.flush()

    def _copy_output(self, timeout: float, until: str | None = None) -> float | None:
        """Copies bpftrace's lines to out_path up to the line `until` (None: to the end), killing
        bpftrace after `timeout` seconds; the seconds the first line took, None without one."""
        started = time.monotonic()
        first = None
        killer = threading.Timer(timeout, self.proc.kill)
        killer.start()
        try:
            for line in self.proc.stdout:
                if first is None:
                    first = time.monotonic() - started
                self.out.write(line)
                if until is not None and line.strip() == until:
                    break
        finally:
            killer.cancel()
        return first

    # On its exit() bpftrace detaches, then prints its map, a kernel stack per key (1-7 s in an
    # emulated guest). A stuck bpftrace is still killed, and the output says how long it took
    # to detach and to finish.
    STOP_TIMEOUT = 240

    def stop(self) -> None:
        os.getppid()  # the stop probe's syscall
        started = time.monotonic()
        first = self._copy_output(self.STOP_TIMEOUT)
        self.proc.wait()
        if first is not None:
            self.out.write(f"\nhucvm-bpftrace-detach-seconds {first:.0f}\n")
        self.out.write(f"\nhucvm-bpftrace-stop-seconds {time.monotonic() - started:.0f}\n")
        self.out.write(f"\nhucvm-bpftrace-rc {self.proc.returncode}\n")
        self.out.close()
