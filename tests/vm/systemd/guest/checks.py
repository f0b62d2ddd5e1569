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

import json
import os
import re
import shutil
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
