#!/usr/bin/python3
"""Guest half of vm_systemd: drive hucprof.service under the real systemd (PID 1) and record facts.

Runs as root from hucvm-test.service (through run-test.sh) in the results share. It judges
nothing: every observation goes into facts.json (plus raw artifacts next to it) and
vm_systemd.py on the host decides and prints the table. Each step records its errors instead of
stopping the run, so one failure still leaves the evidence of the others.

Environment: HUCVM_RESULTS (cwd), HUCVM_DEB (the package, under /host), HUCVM_PORT (the port
of /metrics in the shipped config).
"""

from __future__ import annotations

import fcntl
import json
import os
import re
import shutil
import signal
import stat
import subprocess
import sys
import time

# The guest runs the clean root's python3 on this file under /host: tests/lib is beside it there,
# and hucprof_testlib imports only the standard library until something parses /metrics.
# (abspath, not resolve: a symlink on the host would lead out of /host.)
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "..", "lib"))
import hucprof_testlib as tl  # noqa: E402

UNIT = "hucprof.service"
PROPS = ["MainPID", "ActiveState", "SubState", "Result", "NRestarts", "ExecMainCode",
         "ExecMainStatus", "LoadState", "FragmentPath", "User", "DynamicUser",
         "CapabilityBoundingSet", "AmbientCapabilities"]

facts: dict = {"errors": [], "steps": {}}
T0 = time.monotonic()


def save() -> None:
    with open("facts.json.tmp", "w") as f:
        json.dump(facts, f, indent=1, sort_keys=True)
    os.replace("facts.json.tmp", "facts.json")


def run(*cmd: str, timeout: float = 60) -> tuple[int, str]:
    try:
        r = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                           timeout=timeout)
        return r.returncode, r.stdout
    except subprocess.TimeoutExpired as e:
        out = e.stdout.decode(errors="replace") if isinstance(e.stdout, bytes) else (e.stdout or "")
        return 124, out + f"\n[timed out after {timeout}s]"


def write(name: str, text: str) -> None:
    with open(name, "w") as f:
        f.write(text)


def show() -> dict[str, str]:
    _, out = run("systemctl", "show", UNIT, *[f"--property={p}" for p in PROPS])
    return dict(line.split("=", 1) for line in out.splitlines() if "=" in line)


# The overlay's upper layer (init.sh mounts it here): every change to the clean root since the
# boot, and nothing else. A deleted file is a whiteout there (a 0:0 character device); a
# directory the lower layer has alike is only copied up (for a file made in it), no change.
UPPER = "/.hucsd-rw/upper"
LOWER = "/host" + os.environ.get("HUCVM_ROOT", "/nonexistent")
# What the package may touch that is not the package: logs, caches, the package databases, the
# runtime state of the running system, and the test's own files.
SNAPSHOT_SKIP = ("/proc", "/sys", "/dev", "/run", "/tmp", "/var/tmp", "/host", "/.hucsd-rw",
                 "/var/log", "/var/cache", "/var/lib/apt", "/var/lib/dpkg",
                 "/var/lib/systemd/catalog", "/var/lib/systemd/random-seed",
                 "/var/lib/systemd/timers", "/var/lib/systemd/deb-systemd-user-helper-enabled",
                 "/etc/ld.so.cache", os.environ.get("HUCVM_RESULTS", "/nonexistent"))


def snapshot() -> dict[str, str]:
    """What differs from the clean root now: each changed path of the upper layer with its type
    and mode (a symlink's target, a file's size; "deleted" for a whiteout)."""
    out = {}
    for top, dirs, files in os.walk(UPPER, topdown=True):
        for name in dirs + files:
            real = os.path.join(top, name)
            path = real[len(UPPER):]
            if path.startswith(SNAPSHOT_SKIP):
                continue
            try:
                st = os.lstat(real)
            except OSError:
                continue
            if stat.S_ISCHR(st.st_mode) and st.st_rdev == 0:
                out[path] = "deleted"
                continue
            if stat.S_ISDIR(st.st_mode):
                try:
                    below = os.lstat(LOWER + path)
                    if (below.st_mode, below.st_uid, below.st_gid) == \
                            (st.st_mode, st.st_uid, st.st_gid):
                        continue
                except OSError:
                    pass
            kind = "l " + os.readlink(real) if stat.S_ISLNK(st.st_mode) else \
                "d" if stat.S_ISDIR(st.st_mode) else f"f {st.st_size}"
            out[path] = f"{kind} {st.st_mode:o} {st.st_uid}:{st.st_gid}"
    return out


def processes(name: str) -> list[str]:
    """`PID cmdline` of every process whose comm is `name` (minbase has no procps)."""
    found = []
    for pid in filter(str.isdigit, os.listdir("/proc")):
        try:
            with open(f"/proc/{pid}/comm") as f:
                if f.read().strip() != name:
                    continue
            with open(f"/proc/{pid}/cmdline", "rb") as f:
                found.append(pid + " " + f.read().replace(b"\0", b" ").decode().strip())
        except OSError:
            continue
    return found


def scrape(port: int, timeout: float = 5, path: str = "/metrics") -> tuple[int | None, str]:
    """(status, body), or (None, why) when nothing answered: a fact to record, not an error."""
    try:
        return tl.http_get(f"http://127.0.0.1:{port}{path}", timeout=timeout)
    except OSError as e:
        return None, f"{type(e).__name__}: {e}"


def proc_status(pid: int) -> dict[str, str]:
    out = {}
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            k, _, v = line.partition(":")
            if k in ("Name", "Uid", "Gid", "CapInh", "CapPrm", "CapEff", "CapBnd", "CapAmb",
                     "NoNewPrivs", "Seccomp"):
                out[k] = v.strip()
    return out


def step(name: str):
    """Decorator: run the step now, time it, record exceptions as errors."""
    def deco(fn):
        t = time.monotonic()
        try:
            fn()
        except Exception as e:  # noqa: BLE001 - recorded, evaluated on the host
            facts["errors"].append(f"{name}: {type(e).__name__}: {e}")
        facts["steps"][name] = round(time.monotonic() - t, 2)
        save()
        return fn
    return deco


port = int(os.environ.get("HUCVM_PORT", "9478"))
deb = os.environ.get("HUCVM_DEB", "")


@step("system")
def _system():
    with open("/proc/1/comm") as f:
        facts["pid1"] = f.read().strip()
    facts["kernel"] = os.uname().release
    facts["root_fstype"] = run("findmnt", "-n", "-o", "FSTYPE", "/")[1].strip()
    facts["systemd_version"] = run("systemctl", "--version")[1].splitlines()[0]
    rc, out = run("systemctl", "is-system-running", "--wait", timeout=60)
    facts["system_state"] = out.strip()
    facts["failed_units"] = [line.split()[0] for line in
                             run("systemctl", "list-units", "--failed", "--plain",
                                 "--no-legend")[1].splitlines() if line.strip()]
    facts["boot_time"] = run("systemd-analyze", "time")[1].strip()
    for knob in ("perf_event_paranoid", "kptr_restrict", "unprivileged_bpf_disabled"):
        with open(f"/proc/sys/kernel/{knob}") as f:
            facts[knob] = f.read().strip()


before_install: dict[str, str] = {}


@step("install")
def _install():
    before_install.update(snapshot())
    facts["root_paths_before"] = len(before_install)
    local = "/tmp/" + os.path.basename(deb)  # apt reads it as _apt: not from the 9p share
    shutil.copy(deb, local)
    os.chmod(local, 0o644)
    t = time.monotonic()
    env = ["env", "DEBIAN_FRONTEND=noninteractive"]
    # dpkg refuses a package whose Depends the root does not satisfy, as apt would (apt-get
    # install ./x.deb is dpkg -i after resolving them; under emulation apt alone takes a minute).
    rc, out = run(*env, "dpkg", "-i", local, timeout=300)
    facts["dpkg_install_rc"], facts["dpkg_install_s"] = rc, round(time.monotonic() - t, 2)
    write("dpkg-install.txt", out)
    facts["dpkg_unmet"] = re.findall(r"depends on ([^;\n]+); however", out)
    facts["show_loaded"] = show()
    with open("/lib/systemd/system/hucprof.service") as f:
        facts["unit_file"] = f.read()
    # The package's promise: installed, neither enabled nor started.
    facts["is_enabled_installed"] = run("systemctl", "is-enabled", UNIT)[1].strip()
    facts["is_active_installed"] = run("systemctl", "is-active", UNIT)[1].strip()
    facts["conffiles"] = run("dpkg-query", "-W", "-f=${Conffiles}", "hucprof")[1].split()


@step("start")
def _start():
    t = time.monotonic()
    rc, out = run("systemctl", "enable", "--now", UNIT, timeout=150)
    facts["start_rc"], facts["start_out"] = rc, out
    facts["is_enabled_started"] = run("systemctl", "is-enabled", UNIT)[1].strip()
    facts["start_s"] = round(time.monotonic() - t, 2)
    facts["is_active"] = run("systemctl", "is-active", UNIT)[1].strip()
    facts["show_started"] = s = show()
    pid = int(s.get("MainPID", "0"))
    facts["status_started"] = proc_status(pid) if pid else {}
    facts["exe_started"] = os.readlink(f"/proc/{pid}/exe") if pid else ""
    status, body = scrape(port)
    facts["scrape_status"] = status
    write("metrics-start.txt", body)
    facts["healthy"] = scrape(port, path="/-/healthy")
    facts["ready"] = scrape(port, path="/-/ready")


def journal_entries(*args: str) -> list[dict]:
    out = run("journalctl", "-u", UNIT, "-o", "json", "--no-pager", *args)[1]
    keep = ("MESSAGE", "PRIORITY", "TARGET", "REASON", "ERRNO", "_TRANSPORT",
            "SYSLOG_IDENTIFIER", "_PID", "_COMM")
    entries = []
    for line in out.splitlines():
        try:
            e = json.loads(line)
        except ValueError:
            continue
        if e.get("_COMM") == "hucprof" or e.get("SYSLOG_IDENTIFIER") == "hucprof":
            entries.append({k: e[k] for k in keep if k in e and isinstance(e[k], str)})
    return entries


@step("journal levels")
def _journal_levels():
    # What journalctl selects by priority: its own filtering, not ours.
    facts["journal_warning"] = journal_entries("-p", "warning")
    facts["journal_info"] = journal_entries("-p", "info")


@step("security")
def _security():
    rc, out = run("systemd-analyze", "security", "--no-pager", UNIT, timeout=120)
    facts["security_rc"] = rc
    write("security.txt", out)
    m = re.search(r"Overall exposure level for \S+:\s*([0-9.]+)\s+(\S+)", out)
    facts["exposure"] = float(m.group(1)) if m else None
    facts["exposure_verdict"] = m.group(2) if m else None


# --- which workload pays (docs/metrics.md): two transient units, hucprof's split against perf's
# The sampler needs kernel.perf_event_paranoid <= 2 under the unit (the sampler's warning
# above): the package's own opt-in sysctl file sets it. The shipped config samples at 99 Hz and
# drains every 10 s: under emulation that leaves a few dozen samples in the checks for a
# minute of work, too few to tell a split from noise. So the config is edited as an
# administrator would (sample-frequency, interval) for the restart after the kill -9, and put
# back byte for byte after the work: the purge below still sees the package's own conffile.
SAMPLE_HZ = int(os.environ.get("HUCVM_SAMPLE_HZ", "999"))
DRAIN = os.environ.get("HUCVM_DRAIN", "2s")
PAIRS = int(os.environ.get("HUCVM_WORK_PAIRS", "0"))  # one unit of work: UDP send/recv pairs
PAIRS_BIN = os.environ.get("HUCVM_PAIRS_BIN", "")  # static udp_pairs, under /host
PERF = os.environ.get("HUCVM_PERF", "/usr/bin/perf")  # Debian's perf in the host root
WORKLOADS = {"huc-three": 3, "huc-one": 1}  # unit -> units of work, started side by side
PAYLOAD = 64
SYSCTL = "/usr/share/hucprof/sysctl/60-hucprof-perf-events.conf"
CONFIG = "/etc/hucprof/hucprof.yaml"
PERF_DIR = "/tmp/hucvm-perf"  # the guest's tmpfs, perf's /tmp in the host root
GO = "/run/hucvm-workloads-go"  # the units wait for a shared flock on it: no CPU while waiting
shipped_config = ""
go_lock = None
perf_proc = None
perf_log = None


def perf_chrooted(*args: str) -> list[str]:
    """perf of the host root, run chrooted into the 9p share in a mount namespace of its own with
    the guest's /proc, /sys, cgroup tree and /dev, and PERF_DIR as its /tmp and $HOME (no
    perfconfig of the host's): nothing of the clean root under test is touched or needed."""
    return ["unshare", "--mount", "--propagation", "private", "/bin/sh", "-euc",
            'for d in /proc /sys /sys/fs/cgroup /dev; do mount --bind "$d" "/host$d"; done; '
            f'mount --bind {PERF_DIR} /host/tmp; '
            'exec env HOME=/tmp PERF_CONFIG_NOSYSTEM=1 chroot /host "$@"', "perf", PERF, *args]


@step("sampler on")
def _sampler_on():
    """Before the kill -9, whose restart by systemd is the start that brings the sampler up
    (the restart checks hold for it unchanged): paranoid 2, the config edited, the two units
    waiting for GO, and perf record started, disabled (~25 s under emulation to start over 9p,
    while systemd waits RestartSec=)."""
    global shipped_config, go_lock, perf_proc, perf_log
    rc, out = run("/lib/systemd/systemd-sysctl", SYSCTL)
    facts["workload_sysctl"] = [rc, out.strip()]
    with open("/proc/sys/kernel/perf_event_paranoid") as f:
        facts["workload_paranoid"] = f.read().strip()
    with open(CONFIG) as f:
        shipped_config = f.read()
    edited, n = re.subn(r"^sample-frequency: \d+$|^interval: \S+$",
                        lambda m: f"sample-frequency: {SAMPLE_HZ}" if m.group(0).startswith("s")
                        else f"interval: {DRAIN}", shipped_config, flags=re.M)
    if n != 2:
        raise RuntimeError(f"{CONFIG}: sample-frequency and interval not found ({n} of 2)")
    write(CONFIG, edited)
    facts["workload_config"] = [l for l in edited.splitlines()
                                if l.startswith(("sample-frequency:", "interval:"))]
    if not PAIRS or not PAIRS_BIN:
        raise RuntimeError("no HUCVM_WORK_PAIRS/HUCVM_PAIRS_BIN from the host")
    go_lock = open(GO, "w")
    fcntl.flock(go_lock, fcntl.LOCK_EX)
    # Each unit does its work once GO is released: one udp_pairs process per unit of work, all
    # four side by side, and CPUWeight= in proportion so that each process gets the same CPU.
    # Under emulation what a pair costs in guest CPU time follows the host's contention (one
    # process next to one three times longer paid 1.9x as much per pair, both by hucprof and by
    # perf): only work done under the same conditions splits as the work does. Then the unit
    # stays (sleep) so that its cgroup still exists at the drain after the work: a cgroup gone
    # before its samples are read is "[unknown]" (docs/design.md), and this test is about names.
    for unit, n in WORKLOADS.items():
        each = " ".join(str(i) for i in range(n))
        script = (f"flock -s {GO} true; read a _ < /proc/uptime; pids=; for i in {each}; "
                  f"do {PAIRS_BIN} {PAIRS} {PAYLOAD} & "
                  f'pids="$pids $!"; done; rc=0; for p in $pids; do wait $p || rc=$?; done; '
                  f'read b _ < /proc/uptime; echo "$rc $a $b" > /run/hucvm-{unit}.done; '
                  f"exec sleep 900")
        rc, out = run("systemd-run", f"--unit={unit}", "--collect", "--quiet",
                      f"--property=CPUWeight={100 * n}",
                      f"--description=vm_systemd: {n} units of UDP work", "/bin/sh", "-c", script)
        if rc != 0:
            raise RuntimeError(f"systemd-run --unit={unit}: rc={rc}: {out.strip()}")
    facts["workload_cgroups"] = {u: os.path.isdir(f"/sys/fs/cgroup/system.slice/{u}.service")
                                 for u in WORKLOADS}
    shutil.rmtree(PERF_DIR, ignore_errors=True)
    os.makedirs(PERF_DIR)
    for fifo in ("ctl", "ack"):
        os.mkfifo(f"{PERF_DIR}/{fifo}")
    # One event per unit's cgroup (-G applies to the events before it, in order), kernel
    # callchains only (the checks are kernel code), started disabled until the work.
    events = [a for u in WORKLOADS for a in ("-e", f"cpu-clock/name={u}/")]
    cgroups = ",".join(f"system.slice/{u}.service" for u in WORKLOADS)
    record = ["record", "-a", "-g", "--kernel-callchains", "-F", str(SAMPLE_HZ), *events,
              "-G", cgroups, "-B", "-N", "-D", "-1", "--control", "fifo:/tmp/ctl,/tmp/ack",
              "-o", "/tmp/perf.data"]
    facts["workload_perf_record"] = "perf " + " ".join(record)
    perf_log = open(f"{PERF_DIR}/record.log", "w")
    perf_proc = subprocess.Popen(perf_chrooted(*record), stdout=perf_log,
                                 stderr=subprocess.STDOUT)


@step("kill9")
def _kill9():
    before = show()
    old = int(before.get("MainPID", "0"))
    facts["kill_old_pid"] = old
    facts["kill_nrestarts_before"] = int(before.get("NRestarts", "0") or 0)
    if not old:
        raise RuntimeError("no MainPID to kill")
    os.kill(old, 9)
    t = time.monotonic()
    states, last = [], None
    deadline = t + 60  # RestartSec=10s, plus start time under emulation
    s = {}
    while time.monotonic() < deadline:
        s = show()
        cur = f"{s.get('ActiveState')}/{s.get('SubState')}"
        if cur != last:
            states.append(f"{time.monotonic() - t:5.1f}s {cur} pid={s.get('MainPID')}"
                          f" result={s.get('Result')}")
            last = cur
        if s.get("ActiveState") == "active" and s.get("MainPID") not in ("0", str(old)):
            break
        time.sleep(0.25)
    facts["kill_states"] = states
    facts["kill_recovery_s"] = round(time.monotonic() - t, 2)
    facts["show_restarted"] = s
    new = int(s.get("MainPID", "0") or 0)
    facts["kill_new_pid"] = new
    facts["status_restarted"] = proc_status(new) if new else {}
    # Serving again (READY=1 comes after the listener is up, so no retry loop should be needed).
    status, body = scrape(port)
    facts["scrape_status_restarted"] = status
    write("metrics-restarted.txt", body)


def metric_lines(body: str) -> list[str]:
    """The /metrics lines the workload judgement reads (parsed on the host, prometheus_client)."""
    keep = ("usercopy_workload_", "hucprof_sample_frequency_hertz", "hucprof_drains_total",
            "hucprof_dropped_total")
    return [l for l in body.splitlines() if l.startswith(keep)]


def checks_seconds(lines: list[str]) -> dict[str, float]:
    """unit -> usercopy_workload_cpu_seconds_total of its workload (unit name) in `lines`."""
    out = {}
    for line in lines:
        m = re.match(r'usercopy_workload_cpu_seconds_total\{workload="([^"]+)\.service"'
                     r'[^}]*\} (\S+)$', line)
        if m:
            out[m.group(1)] = float(m.group(2))
    return out


def drains(port: int) -> float:
    m = re.search(r"^hucprof_drains_total (\S+)$", scrape(port)[1], re.M)
    return float(m.group(1)) if m else -1


def perf_control(command: str, timeout: float = 60) -> str:
    """Send `command` on perf record's control fifo, return its ack (or why there is none)."""
    deadline = time.monotonic() + timeout
    while True:  # perf opens the fifo once it is set up: until then nobody reads it
        try:
            fd = os.open(f"{PERF_DIR}/ctl", os.O_WRONLY | os.O_NONBLOCK)
            break
        except OSError:
            if time.monotonic() > deadline:
                return "no reader on the control fifo"
            time.sleep(0.2)
    os.write(fd, (command + "\n").encode())
    os.close(fd)
    ack = os.open(f"{PERF_DIR}/ack", os.O_RDONLY | os.O_NONBLOCK)
    try:
        got = b""
        while time.monotonic() < deadline and b"\n" not in got:
            try:
                got += os.read(ack, 64)
            except BlockingIOError:
                pass
            time.sleep(0.05)
        return got.decode().strip("\0\n ") or "no ack"
    finally:
        os.close(ack)


# The callchain test of the daemon's sampler (bpf/sampler.bpf.c, kernel_ranges.h): from the
# sampled frame outwards, a check function before any interrupt entry is a sample in a check;
# an interrupt entry first means the interrupt's own time (excluded), a check further out or not.
CHECK_FUNCTIONS = {"__check_object_size", "check_heap_object"}
IRQ_FUNCTIONS = {"__do_softirq", "handle_softirqs", "do_softirq_own_stack", "__irq_exit_rcu",
                 "irq_exit_rcu", "irq_exit"}
IRQ_PREFIXES = ("asm_sysvec_", "asm_common_interrupt", "asm_spurious_interrupt", "asm_exc_")


def irq_sections() -> list[tuple[int, int]]:
    """__irqentry_text and __softirqentry_text from /proc/kallsyms (the daemon's sections)."""
    found = {}
    with open("/proc/kallsyms") as f:
        for line in f:
            addr, _, name = line.split()[:3]
            if name in ("__irqentry_text_start", "__irqentry_text_end",
                        "__softirqentry_text_start", "__softirqentry_text_end"):
                found[name] = int(addr, 16)
    return [(found[f"{s}_start"], found[f"{s}_end"])
            for s in ("__irqentry_text", "__softirqentry_text")
            if f"{s}_start" in found and f"{s}_end" in found]


def perf_counts(script: str, sections: list[tuple[int, int]]) -> dict[str, dict[str, int]]:
    """Per perf event (one per unit's cgroup): samples, samples in a check, samples an interrupt
    took from a check, from `perf script -F event,ip,sym` (a header line per sample, then its
    callchain leaf first, one tab-indented "ip symbol" line per frame)."""
    counts: dict[str, dict[str, int]] = {}
    event, verdict, interrupted = None, "outside", False

    def close():
        if event is not None:
            c = counts.setdefault(event, {"samples": 0, "in_check": 0, "interrupted": 0})
            c["samples"] += 1
            c["in_check"] += verdict == "check"
            c["interrupted"] += verdict == "interrupted"

    for line in script.splitlines():
        if not line.strip():
            continue
        if not line.startswith("\t"):
            close()
            event, verdict, interrupted = line.strip().rstrip(":").strip(), "outside", False
            continue
        parts = line.split(None, 1)
        if verdict != "outside" or len(parts) < 2:
            continue
        ip = int(parts[0], 16)
        name = parts[1].split(" (")[0].strip().split(".")[0]  # __check_object_size.cold too
        if name in CHECK_FUNCTIONS:
            verdict = "interrupted" if interrupted else "check"
        elif name in IRQ_FUNCTIONS or name.startswith(IRQ_PREFIXES) or \
                any(lo <= ip < hi for lo, hi in sections):
            interrupted = True
    close()
    return counts


@step("workloads")
def _workloads():
    global go_lock
    try:
        if perf_proc is None:
            raise RuntimeError("perf record not started (the sampler on step failed)")
        new = int(show().get("MainPID", "0") or 0)
        facts["workload_running"] = [l for l in run("journalctl", "-u", UNIT, f"_PID={new}",
                                                    "-o", "cat", "--no-pager")[1].splitlines()
                                     if "running:" in l or "sampler" in l]
        facts["workload_pairs"] = PAIRS
        t = time.monotonic()
        facts["workload_perf_enable"] = perf_control("enable")  # once perf is set up
        facts["workload_perf_wait_s"] = round(time.monotonic() - t, 2)
        facts["workload_metrics_before"] = metric_lines(scrape(port)[1])
        t_go = time.monotonic()
        fcntl.flock(go_lock, fcntl.LOCK_UN)
        go_lock.close()
        go_lock = None
        deadline = t_go + 180
        done = {}
        while len(done) < len(WORKLOADS) and time.monotonic() < deadline:
            for u in WORKLOADS:
                try:
                    with open(f"/run/hucvm-{u}.done") as f:
                        rc_s, a, b = f.read().split()
                        done[u] = {"rc": int(rc_s), "start": float(a), "end": float(b)}
                except (OSError, ValueError):
                    pass
            time.sleep(0.25)
        facts["workload_done"] = done
        facts["workload_s"] = round(time.monotonic() - t_go, 2)
        facts["workload_perf_disable"] = perf_control("disable")
        # Every sample of the work read by the daemon: two drains after the work ended.
        d0, deadline = drains(port), time.monotonic() + 30
        while drains(port) < d0 + 2 and time.monotonic() < deadline:
            time.sleep(0.25)
        facts["workload_metrics_after"] = metric_lines(scrape(port)[1])
        facts["workload_cpu_usage_ns"] = {
            u: run("systemctl", "show", f"{u}.service", "--property=CPUUsageNSec", "--value")[1]
            .strip() for u in WORKLOADS}
    finally:  # whatever failed: perf ended, the units gone, the config as shipped
        if perf_proc is not None:
            perf_proc.send_signal(signal.SIGINT)
            try:
                facts["workload_perf_rc"] = perf_proc.wait(timeout=60)
            except subprocess.TimeoutExpired:
                perf_proc.kill()
                facts["workload_perf_rc"] = "killed after 60 s"
            perf_log.close()
        if go_lock is not None:
            go_lock.close()
        run("systemctl", "stop", *(f"{u}.service" for u in WORKLOADS), timeout=60)
        if shipped_config:
            write(CONFIG, shipped_config)
    with open(f"{PERF_DIR}/record.log") as f:
        facts["workload_perf_record_log"] = f.read()[-1500:]
    t = time.monotonic()
    script_args = ["script", "-i", "/tmp/perf.data", "-F", "event,ip,sym", "--max-stack", "24",
                   "--kallsyms", "/proc/kallsyms"]
    r = subprocess.run(perf_chrooted(*script_args), stdout=subprocess.PIPE,
                       stderr=subprocess.PIPE, text=True, timeout=180)
    facts["workload_perf_script"] = ["perf " + " ".join(script_args), r.returncode,
                                     r.stderr[-800:]]
    facts["workload_perf"] = perf_counts(r.stdout, irq_sections())
    facts["workload_perf_script_s"] = round(time.monotonic() - t, 2)
    # The numbers in the guest's log too (the console a CI digest keeps); judged on the host.
    hz = SAMPLE_HZ
    m = re.search(r"^hucprof_sample_frequency_hertz (\S+)$",
                  "\n".join(facts["workload_metrics_after"]), re.M)
    if m and float(m.group(1)) > 0:
        hz = int(float(m.group(1)))
    seconds = [checks_seconds(facts[k]) for k in ("workload_metrics_before",
                                                   "workload_metrics_after")]
    period = (10**9 // hz) / 1e9
    hucprof = {u: (seconds[1].get(u, 0) - seconds[0].get(u, 0)) / period for u in WORKLOADS}
    perf_in = {u: facts["workload_perf"].get(u, {}).get("in_check", 0) for u in WORKLOADS}
    for who, c in (("hucprof", hucprof), ("perf", perf_in)):
        n = sum(c.values())
        print(f"HUCVM: which workload pays: {who}: "
              + ", ".join(f"{u} {v:.0f}" for u, v in c.items())
              + f" samples in the checks, huc-three's share {c['huc-three'] / n if n else 0:.3f}"
              f" (3 of 4 units: 0.75)", flush=True)
    shutil.rmtree(PERF_DIR, ignore_errors=True)


def journal_cursor() -> str:
    out = run("journalctl", "-n", "0", "--show-cursor", "--quiet", "--no-pager")[1]
    m = re.search(r"-- cursor: (\S+)", out)
    return m.group(1) if m else ""


@step("stop")
def _stop():
    cursor = journal_cursor()
    t = time.monotonic()
    rc, out = run("systemctl", "stop", UNIT, timeout=60)
    facts["stop_rc"], facts["stop_out"] = rc, out
    facts["stop_s"] = round(time.monotonic() - t, 2)
    facts["show_stopped"] = show()
    facts["is_active_stopped"] = run("systemctl", "is-active", UNIT)[1].strip()
    status, body = scrape(port, timeout=2)
    facts["scrape_after_stop"] = status if status is not None else body
    # What systemd and hucprof logged about the stop (independent of the unit staying loaded).
    out = run("journalctl", "-u", UNIT, f"--after-cursor={cursor}", "-o", "json", "--no-pager")[1]
    msgs = []
    for line in out.splitlines():
        try:
            e = json.loads(line)
        except ValueError:
            continue
        msgs.append({"id": e.get("MESSAGE_ID", ""), "pid1": e.get("_PID") == "1",
                     "message": e.get("MESSAGE") if isinstance(e.get("MESSAGE"), str) else ""})
    facts["stop_journal"] = msgs


@step("journal")
def _journal():
    write("hucprof-journal.txt",
          run("journalctl", "-b", "-u", UNIT, "--no-pager", "-o", "short-monotonic")[1])
    # What PID 1 said about the unit: unknown/ignored settings, failures, the kill, the restart.
    pid1 = run("journalctl", "-b", "_PID=1", "--no-pager", "-o", "cat")[1]
    facts["pid1_about_unit"] = [l for l in pid1.splitlines() if "hucprof" in l]


@step("purge")
def _purge():
    t = time.monotonic()
    rc, out = run("env", "DEBIAN_FRONTEND=noninteractive", "dpkg", "--purge", "hucprof",
                  timeout=300)
    facts["purge_rc"], facts["purge_s"] = rc, round(time.monotonic() - t, 2)
    write("dpkg-purge.txt", out)
    facts["purge_dpkg_knows"] = run("dpkg", "-s", "hucprof")[0] == 0
    facts["purge_load_state"] = show().get("LoadState")
    facts["purge_processes"] = "; ".join(processes("hucprof"))
    after = snapshot()
    facts["purge_added"] = sorted(p + " " + after[p] for p in set(after) - set(before_install))
    facts["purge_removed"] = sorted(p for p in set(before_install) - set(after))
    facts["purge_changed"] = sorted(p + ": " + before_install[p] + " -> " + after[p]
                                    for p in set(after) & set(before_install)
                                    if after[p] != before_install[p])


facts["total_s"] = round(time.monotonic() - T0, 2)
save()
raise SystemExit(0)
