#!/usr/bin/env python3
"""vm_systemd: the Debian package on a clean Debian root, under a real systemd (PID 1), in a
Debian kernel under QEMU.

The root is debootstrap's minbase of Debian 12 with systemd, python3 (the guest's checks) and
exactly the packages the .deb's Depends names (built once, cached by that list); the guest sees
it as an overlayfs (read-only 9p below, tmpfs above), so nothing is written back. In the guest:
`dpkg -i hucprof_*.deb` (built by scripts/build-deb.sh: dpkg-buildpackage, debhelper) must find
its dependencies and enable and start nothing; `systemctl enable --now hucprof`, then check that it is active,
serves /metrics with the usercopy probe attached, answers /-/ready, runs with exactly the unit's
capabilities (/proc/PID/status), that `journalctl -p warning` holds its warnings and none of
its info lines, that it is restarted after `kill -9` and stops cleanly, that
`systemd-analyze security` rates the unit at most MAX_EXPOSURE, and that `dpkg --purge` leaves
the root as it was. Which workload pays: with the sampler on (the package's sysctl file), two
transient units doing 3 and 1 units of UDP work side by side are named by their unit names in
/metrics, and hucprof's split of the checks' CPU between them is 3/4 and agrees with perf's
(the host's perf, chrooted into the host root's share, one `-G` event per unit's cgroup).

Usage: vm_systemd.py BUILD_DIR [--hucprof BINARY] [--kernel 6.1|6.12] [--timeout S]
                      [--cmdline 'systemd.log_level=debug'] [-v]
Exit: 0 pass, 1 fail, 77 skip (no qemu, static busybox, debootstrap, kernel package or mirror).
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import re
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.dont_write_bytecode = True  # keep the source tree clean
HERE = Path(__file__).resolve().parent
VM = HERE.parent
REPO = VM.parent.parent
sys.path.insert(0, str(VM))
sys.path.insert(0, str(REPO / "tests" / "lib"))
import debian_package  # noqa: E402
import hucprof_testlib as tl  # noqa: E402
import initramfs  # noqa: E402
import kernel_packages  # noqa: E402
import qemu_run  # noqa: E402
import vmlib  # noqa: E402
import tier_kernels  # noqa: E402
from vmlib import Skip, VmFailure, log  # noqa: E402

# Kernel label -> Debian meta package: Debian 12's own kernels of the tier (6.1, 6.12), the
# release the package is built for.
KERNELS = {k.label: k.meta_package for k in tier_kernels.KERNELS if k.suite is None}
# The clean root: Debian 12 from the registry, what the package is for.
ROOT_SUITE = "bookworm"
ROOT_MIRROR = "http://deb.debian.org/debian"
ROOT_PACKAGES = ["systemd", "python3"]
GUEST = HERE / "guest"
GUEST_INIT = GUEST / "init.sh"
MAX_EXPOSURE = 3.0
# What the brief and deploy/hucprof.service promise; the guest checks the *installed* unit
# declares exactly this, then that the process holds exactly what the unit declares.
EXPECTED_CAPS = {"cap_bpf", "cap_perfmon", "cap_syslog"}
# What the running daemon holds after its drop: --capabilities.keep's default.
KEPT_CAPS = {"cap_syslog"}
# Linux capability numbers (include/uapi/linux/capability.h).
CAP_NAMES = ["chown", "dac_override", "dac_read_search", "fowner", "fsetid", "kill", "setgid",
             "setuid", "setpcap", "linux_immutable", "net_bind_service", "net_broadcast",
             "net_admin", "net_raw", "ipc_lock", "ipc_owner", "sys_module", "sys_rawio",
             "sys_chroot", "sys_ptrace", "sys_pacct", "sys_admin", "sys_boot", "sys_nice",
             "sys_resource", "sys_time", "sys_tty_config", "mknod", "lease", "audit_write",
             "audit_control", "setfcap", "mac_override", "mac_admin", "syslog", "wake_alarm",
             "block_suspend", "audit_read", "perfmon", "bpf", "checkpoint_restore"]
CAP_NUM = {"cap_" + n: i for i, n in enumerate(CAP_NAMES)}
DYNAMIC_UID = range(61184, 65520)  # systemd's DynamicUser= range
# Which workload pays: two transient units doing 3 and 1 units of UDP work side by side, while
# hucprof samples at SAMPLE_HZ (the config edited for the restart after kill -9: guest/checks.py
# says why) and perf records the same window per cgroup. One unit is WORK_PAIRS loopback
# send/recv pairs of 64 bytes, one udp_pairs process: the four ran side by side for 2-2.6 s, with
# 136-242 samples in the checks per unit at 999 Hz (five runs under TCG, host load 3-7).
WORKLOADS = {"huc-three": 3, "huc-one": 1}
WORK_PAIRS = 10000
SAMPLE_HZ = 999
DRAIN = "2s"
# Fewer samples in the checks than this and a split says nothing (tests/host/test_workloads.py).
MIN_CHECK_SAMPLES = 100
# Debian's linux-perf of the host (scripts/install-deps.sh), run in the guest from the host root.
HOST_PERF = Path("/usr/bin/perf")
# sd-messages.h: "Deactivated successfully." / "Failed with result '...'."
SD_MESSAGE_UNIT_SUCCESS = "7ad2d189f7e94e70a38c781354912448"
SD_MESSAGE_UNIT_FAILURE_RESULT = "d9b373ed55a64feb8242e02dbe79a49c"


# --------------------------------------------------------------------------------------------
# Host preparation: initramfs (vmlib's modules + overlay, our init) and the .deb
# --------------------------------------------------------------------------------------------

def build_initramfs(k: kernel_packages.Kernel, out: Path) -> list[str]:
    """vmlib's initramfs with overlayfs added and guest/init.sh (overlay + switch_root)."""
    mods = initramfs.resolve_modules(k, initramfs.optional_modules(k, initramfs.GUEST_MODULES) + ["overlay"])
    for old in out.parent.glob("initramfs-systemd-*.cpio"):
        if old != out:
            old.unlink(missing_ok=True)
    return initramfs.write_initramfs(out, GUEST_INIT, mods, [Path(__file__)])


def deb_depends(deb: Path) -> list[str]:
    """The package names of the .deb's Depends, the first of each alternative."""
    text = subprocess.run(["dpkg-deb", "-f", str(deb), "Depends"], capture_output=True,
                          text=True, check=True).stdout
    return sorted({alt.split("|")[0].split("(")[0].split(":")[0].strip()
                   for alt in text.split(",") if alt.strip()})


def real_packages(names: list[str]) -> list[str]:
    """`names` with each virtual package (e.g. libspdlog1.10-fmt9) replaced by the package that
    provides it, as apt would choose: debootstrap installs real packages only."""
    shown = subprocess.run(["apt-cache", "show", "--no-all-versions", *names],
                           capture_output=True, text=True).stdout
    real = set(re.findall(r"^Package: (\S+)", shown, re.M))
    out = set(real & set(names))
    for name in sorted(set(names) - real):
        pkg = subprocess.run(["apt-cache", "showpkg", name], capture_output=True, text=True).stdout
        providers = pkg.split("Reverse Provides:", 1)[-1].split()
        if not providers:
            raise VmFailure(f"no package provides {name} (the .deb's Depends) for apt here")
        out.add(providers[0])
    return sorted(out)


def ensure_root(cache: Path, deb: Path) -> Path:
    """A clean Debian root for the guest: debootstrap's minbase of ROOT_SUITE, plus systemd (the
    service manager under test), python3 (the guest's checks) and the packages the .deb depends
    on, so that `dpkg -i hucprof_*.deb` finds its dependencies without a network and a
    dependency the package forgot is missing. Rebuilt when that list changes. debootstrap
    writes into a tmpfs first (dpkg's fsync per file costs minutes on a loaded disk), then the
    tree is copied into the cache in one go."""
    if shutil.which("debootstrap") is None:
        raise Skip("debootstrap not installed (scripts/install-deps.sh)")
    wanted = sorted(set(ROOT_PACKAGES) | set(deb_depends(deb)))
    key = json.dumps({"layout": 2, "suite": ROOT_SUITE, "mirror": ROOT_MIRROR,
                      "variant": "minbase", "include": wanted})
    root = cache / f"debian-root-{ROOT_SUITE}"
    stamp = cache / f"debian-root-{ROOT_SUITE}.key"
    if root.is_dir() and stamp.is_file() and stamp.read_text() == key:
        return root
    packages = real_packages(wanted)
    shm = Path("/dev/shm")
    scratch_parent = shm if shm.is_dir() and shutil.disk_usage(shm).free > 2 << 30 else cache
    scratch = Path(tempfile.mkdtemp(prefix="hucsd-root-", dir=scratch_parent))
    t = time.monotonic()
    log(f"debootstrap --variant=minbase --include={','.join(packages)} {ROOT_SUITE} "
        f"({scratch})")
    try:
        r = subprocess.run(["debootstrap", "--variant=minbase", f"--include={','.join(packages)}",
                            ROOT_SUITE, str(scratch), ROOT_MIRROR],
                           capture_output=True, text=True, timeout=1800)
        if r.returncode != 0:
            tail = (r.stdout + r.stderr)[-2000:]
            if re.search(r"Failed getting release file|Temporary failure resolving|"
                         r"Could not resolve|Connection (refused|timed out)", tail):
                raise Skip(f"the Debian mirror {ROOT_MIRROR} is not reachable:\n{tail}")
            raise VmFailure(f"debootstrap failed (rc={r.returncode}):\n{tail}")
        # Downloaded packages are not part of the system.
        for p in (scratch / "var" / "cache" / "apt" / "archives").glob("*.deb"):
            p.unlink()
        log(f"debootstrap took {time.monotonic() - t:.0f} s; copying the root into {root}")
        shutil.rmtree(root, ignore_errors=True)
        root.mkdir(parents=True)
        subprocess.run(f"tar -C {scratch} -cf - . | tar -C {root} -xpf -", shell=True,
                       check=True)
        stamp.write_text(key)
    finally:
        subprocess.run(["rm", "-rf", "--one-file-system", str(scratch)])
    log(f"clean root ready in {time.monotonic() - t:.0f} s")
    return root


def dpkg_seed(cache: Path, root: Path) -> Path:
    """A tar of the root's /var/lib/dpkg, that the guest's init unpacks into the overlay's upper
    layer: apt and dpkg read every *.list file, and one sequential 9p read of a tar costs far less
    under emulation than many small opens. Same bytes as the lower layer."""
    out = cache / "dpkg-seed.tar"
    tmp = out.with_suffix(".tmp")
    r = subprocess.run(["tar", "-C", str(root), "-cf", str(tmp), "var/lib/dpkg"],
                       capture_output=True, text=True)
    if r.returncode != 0:
        raise VmFailure(f"tar of {root}/var/lib/dpkg failed: {r.stderr.strip()}")
    tmp.rename(out)
    return out


def listen_port() -> int:
    """The port of the shipped config (web.listen-address: ":9478")."""
    text = (REPO / "deploy" / "hucprof.yaml").read_text()
    m = re.search(r'^\s*(?:web\.)?listen-address:\s*"?[^"\s]*:(\d+)"?', text, re.M)
    return int(m.group(1)) if m else 9478


# --------------------------------------------------------------------------------------------
# Evaluation of the guest's facts.json
# --------------------------------------------------------------------------------------------

@dataclasses.dataclass
class Row:
    what: str
    expected: str | None  # None: informational
    got: str
    ok: bool = True


def caps_of(mask_hex: str | None) -> set[str]:
    if not mask_hex:
        return set()
    v = int(mask_hex, 16)
    return {"cap_" + (CAP_NAMES[i] if i < len(CAP_NAMES) else str(i))
            for i in range(64) if v >> i & 1}


def mask_of(caps: set[str]) -> str:
    return f"{sum(1 << CAP_NUM[c] for c in caps):016x}"


def unit_setting(unit_text: str, key: str) -> list[str]:
    vals: list[str] = []
    for line in unit_text.splitlines():
        m = re.match(rf"^\s*{key}=(.*)$", line)
        if m:
            vals = [] if not m.group(1).strip() else vals + m.group(1).split()
    return vals


def evaluate(f: dict, results: Path) -> list[Row]:
    rows: list[Row] = []

    def check(what, expected, got, ok=None):
        rows.append(Row(what, str(expected), str(got), (got == expected) if ok is None else ok))

    def info(what, got):
        rows.append(Row(what, None, str(got)))

    # The machine
    check("PID 1", "systemd", f.get("pid1"))
    check("root file system (overlay: the clean root over 9p, tmpfs upper)", "overlay",
          f.get("root_fstype"))
    info("kernel", f.get("kernel"))
    info("systemd", f.get("systemd_version"))
    info("system state before the test", f"{f.get('system_state')}; failed units: "
         f"{' '.join(f.get('failed_units') or []) or 'none'}")
    info("boot", (f.get("boot_time") or "").splitlines()[0] if f.get("boot_time") else "?")

    # Install (dpkg checks Depends against the clean root) and start
    check("dpkg -i hucprof_*.deb exit status", 0, f.get("dpkg_install_rc"))
    info("  dpkg -i took", f"{f.get('dpkg_install_s')} s")
    check("  its Depends are all satisfied by the clean root", "none unmet",
          "; ".join(f.get("dpkg_unmet") or []) or "none unmet")
    loaded = f.get("show_loaded", {})
    check("unit loaded from the package", "loaded /lib/systemd/system/hucprof.service",
          f"{loaded.get('LoadState')} {loaded.get('FragmentPath')}")
    check("installing enables nothing (is-enabled)", "disabled", f.get("is_enabled_installed"))
    check("installing starts nothing (is-active)", "inactive", f.get("is_active_installed"))
    check("/etc/hucprof/hucprof.yaml is a conffile", True,
          "/etc/hucprof/hucprof.yaml" in (f.get("conffiles") or []))
    check("systemctl enable --now hucprof exit status", 0, f.get("start_rc"))
    info("  systemctl enable --now took (Type=notify: until READY=1)", f"{f.get('start_s')} s")
    check("systemctl is-enabled", "enabled", f.get("is_enabled_started"))
    check("systemctl is-active", "active", f.get("is_active"))
    started = f.get("show_started", {})
    check("MainPID runs /usr/bin/hucprof", "/usr/bin/hucprof", f.get("exe_started"))

    # /metrics
    check("GET /metrics", 200, f.get("scrape_status"))
    samples = []
    mpath = results / "metrics-start.txt"
    if f.get("scrape_status") == 200 and mpath.exists():
        try:
            samples = tl.parse_metrics(mpath.read_text())
        except ValueError as e:
            check("/metrics parses", "ok", str(e))
    hard = tl.select(samples, "usercopy_hardened_enabled")
    check("usercopy_hardened_enabled", "1", " ".join(f"{v:g}" for _, v in hard) or "absent")
    attached = {l.get("mode"): v for l, v in
                tl.select(samples, "hucprof_probe_attached", target="__check_object_size")}
    probe_modes = sorted(m for m, v in attached.items() if m in ("kprobe", "fentry") and v == 1)
    check('hucprof_probe_attached{target="__check_object_size",mode=kprobe|fentry}', "1",
          f"1 (mode={probe_modes[0]})" if probe_modes else
          (", ".join(f"{m}={v:g}" for m, v in attached.items()) or "absent"),
          ok=bool(probe_modes))
    others = sorted(f'{l.get("target")}:{l.get("mode")}' for l, v in
                    tl.select(samples, "hucprof_probe_attached") if v == 1)
    info("  attached (target:mode)", ", ".join(others) or "none")
    for l, v in tl.select(samples, "hucprof_probe_unavailable_info"):
        info("  unavailable", f'{l.get("target")}: {l.get("reason")}')
    healthy, ready = f.get("healthy") or [None, ""], f.get("ready") or [None, ""]
    check("GET /-/healthy, /-/ready once started", "200 200", f"{healthy[0]} {ready[0]}")
    info("  kernel.perf_event_paranoid / kptr_restrict / unprivileged_bpf_disabled",
         f"{f.get('perf_event_paranoid')} / {f.get('kptr_restrict')} / "
         f"{f.get('unprivileged_bpf_disabled')}")

    # Capabilities: the installed unit declares exactly the expected set, the process holds it.
    unit_text = f.get("unit_file", "")
    bset = {c.lower() for c in unit_setting(unit_text, "CapabilityBoundingSet")}
    amb = {c.lower() for c in unit_setting(unit_text, "AmbientCapabilities")}
    check("unit CapabilityBoundingSet=", " ".join(sorted(EXPECTED_CAPS)), " ".join(sorted(bset)))
    check("unit AmbientCapabilities=", " ".join(sorted(EXPECTED_CAPS)), " ".join(sorted(amb)))
    # Once attached, hucprof keeps only --capabilities.keep (default cap_syslog) and empties the
    # ambient set; without CAP_SETPCAP the rest stays in the bounding set (docs/configuration.md).
    bounding = mask_of(bset) if bset <= set(CAP_NUM) else "?"
    kept = mask_of(KEPT_CAPS & bset) if bset <= set(CAP_NUM) else "?"

    def proc_rows(tag, st):
        for field, exp in (("CapEff", kept), ("CapPrm", kept), ("CapBnd", bounding),
                           ("CapAmb", mask_of(set()))):
            got = st.get(field, "absent")
            check(f"{tag}/proc/PID/status {field}", exp,
                  f"{got} ({' '.join(sorted(caps_of(got))) or '-'})" if got != "absent" else got,
                  ok=got == exp)
        uid = st.get("Uid", "").split()
        check(f"{tag}dynamic user (uid in 61184..65519)", "yes",
              f"{'yes' if uid and int(uid[0]) in DYNAMIC_UID else 'no'} (Uid: {' '.join(uid)})",
              ok=bool(uid) and all(int(u) in DYNAMIC_UID for u in uid))
        check(f"{tag}NoNewPrivs / Seccomp (filter)", "1 / 2",
              f"{st.get('NoNewPrivs')} / {st.get('Seccomp')}")

    proc_rows("", f.get("status_started", {}))

    # journald: each line at its own level (journalctl's -p filter, not ours)
    warning, all_info = f.get("journal_warning") or [], f.get("journal_info") or []
    info_only = [e for e in all_info if e.get("PRIORITY") == "6"]
    check("journal: hucprof's lines carry a priority", "every line",
          "every line" if all_info and all(e.get("PRIORITY") for e in all_info)
          else f"{sum(not e.get('PRIORITY') for e in all_info)} of {len(all_info)} without",
          ok=bool(all_info) and all(e.get("PRIORITY") for e in all_info))
    check("journalctl -p warning: the warnings, no info line", "warnings only",
          f"{len(warning)} lines, priorities {sorted({e.get('PRIORITY') for e in warning})}",
          ok=bool(warning) and all(int(e.get("PRIORITY", "9")) <= 4 for e in warning)
          and not any(e["MESSAGE"] in {w["MESSAGE"] for w in warning} for e in info_only))
    check("journalctl -p info: the info lines too", "serving metrics ...",
          "found" if any(e.get("MESSAGE", "").startswith("info: serving metrics on")
                         for e in info_only) else "missing",
          ok=any(e.get("MESSAGE", "").startswith("info: serving metrics on") for e in info_only))
    sampler = [e for e in warning if e.get("TARGET") == "cpu-clock"]
    if f.get("perf_event_paranoid") in ("3", "4"):
        # Debian's kernel at paranoid 3 refuses perf_event_open to CAP_PERFMON: a real warning.
        check("  the sampler's warning has its fields", "TARGET=cpu-clock ERRNO=13 REASON=...",
              " ".join(f"{k}={sampler[0].get(k, '?')[:30]}" for k in ("TARGET", "ERRNO", "REASON"))
              if sampler else "no TARGET=cpu-clock warning",
              ok=bool(sampler) and sampler[0].get("ERRNO") == "13" and
              "perf_event_open" in sampler[0].get("REASON", ""))
    info("  transport", " ".join(sorted({e.get("_TRANSPORT", "?") for e in all_info})))
    for e in warning:
        # An error (priority <= 3) is why the unit failed: whole, verifier log included.
        message = e.get("MESSAGE", "")
        info("  warning", message if int(e.get("PRIORITY", "9")) <= 3 else message[:110])

    # systemd-analyze security
    exp = f.get("exposure")
    check(f"systemd-analyze security exposure (<= {MAX_EXPOSURE})", f"<= {MAX_EXPOSURE}",
          f"{exp} {f.get('exposure_verdict')}" if exp is not None else "not found",
          ok=exp is not None and exp <= MAX_EXPOSURE)

    # kill -9 -> restart
    rs = f.get("show_restarted", {})
    old, new = f.get("kill_old_pid"), f.get("kill_new_pid")
    check("kill -9 MainPID: restarted with a new MainPID", "new pid, active",
          f"{old} -> {new}, {rs.get('ActiveState')}/{rs.get('SubState')}",
          ok=bool(new) and new != old and rs.get("ActiveState") == "active")
    nb = f.get("kill_nrestarts_before")
    check("  NRestarts", str((nb or 0) + 1), rs.get("NRestarts"))
    info("  recovery (RestartSec=10s)", f"{f.get('kill_recovery_s')} s: "
         + " | ".join(s.strip() for s in f.get("kill_states", [])))
    proc_rows("  restarted: ", f.get("status_restarted", {}))
    check("  GET /metrics after the restart", 200, f.get("scrape_status_restarted"))

    # stop
    st = f.get("show_stopped", {})
    check("systemctl stop hucprof exit status", 0, f.get("stop_rc"))
    info("  systemctl stop took", f"{f.get('stop_s')} s")
    check("  state after stop", "inactive/dead", f"{st.get('ActiveState')}/{st.get('SubState')}")
    check("  Result", "success", st.get("Result"))
    check("  main process exit (ExecMainCode=1 CLD_EXITED / ExecMainStatus)", "1/0",
          f"{st.get('ExecMainCode')}/{st.get('ExecMainStatus')}")
    sj = f.get("stop_journal", [])
    ok_msg = [m["message"] for m in sj if m["pid1"] and m["id"] == SD_MESSAGE_UNIT_SUCCESS]
    bad_msg = [m["message"] for m in sj if m["pid1"] and (m["id"] == SD_MESSAGE_UNIT_FAILURE_RESULT
                                                           or "Failed" in m["message"]
                                                           or "status=" in m["message"])]
    check("  journal: systemd says the stop was clean", "Deactivated successfully.",
          "; ".join(bad_msg + ok_msg) or "nothing logged", ok=bool(ok_msg) and not bad_msg)
    check("  /metrics gone after stop", "connection refused",
          "connection refused" if "refused" in str(f.get("scrape_after_stop")).lower()
          else str(f.get("scrape_after_stop"))[:60])

    # dpkg --purge: the root as it was
    check("dpkg --purge hucprof exit status", 0, f.get("purge_rc"))
    check("  dpkg knows hucprof no more (dpkg -s)", False, f.get("purge_dpkg_knows", True))
    check("  systemd knows hucprof.service no more", "not-found", f.get("purge_load_state"))
    check("  no hucprof process left", "none", f.get("purge_processes") or "none")
    leftover = (f.get("purge_added") or []) + [f"removed {p}" for p in f.get("purge_removed") or []] \
        + [f"changed {p}" for p in f.get("purge_changed") or []]
    check("  the root is as before the install", "no difference",
          "; ".join(leftover[:6]) + (f" (+{len(leftover) - 6})" if len(leftover) > 6 else "")
          or "no difference", ok=not leftover and f.get("purge_added") is not None)
    info("  changes to the clean root before the install (boot)", f.get("root_paths_before"))

    evaluate_workloads(f, check, info)

    check("guest step errors", "none", "; ".join(f.get("errors", [])) or "none")
    return rows


def parsed(lines: list[str]) -> list:
    """The guest's saved /metrics lines, parsed (nothing when they are not the format)."""
    try:
        return tl.parse_metrics("\n".join(lines) + "\n") if lines else []
    except ValueError:
        return []


def workload_counts(lines: list[str], name: str) -> dict[str, tuple[str, float]]:
    """workload -> (workload_kind, value) of one family among the guest's saved /metrics lines."""
    return {l.get("workload", ""): (l.get("workload_kind", ""), v)
            for l, v in tl.select(parsed(lines), name)}


def split(three: float, one: float) -> tuple[float, int, float]:
    """(huc-three's share, samples, 4 sigma of a binomial at 3/4 + 0.02), as the host test."""
    n = three + one
    share = three / n if n else 0.0
    return share, round(n), (4 * (0.75 * 0.25 / n) ** 0.5 + 0.02) if n else 1.0


def evaluate_workloads(f: dict, check, info) -> None:
    """Which workload pays: hucprof's split of the checks' CPU between two units doing 3 and 1
    units of the same work, against the work itself (3/4) and against perf's own per-cgroup
    samples whose callchain passes through a check (the daemon's test, guest/checks.py)."""
    three, one = (f"{u}.service" for u in WORKLOADS)
    running = " ".join(f.get("workload_running") or [])
    before, after = f.get("workload_metrics_before") or [], f.get("workload_metrics_after") or []
    freq = [v for _, v in tl.select(parsed(after), "hucprof_sample_frequency_hertz")]
    hz = int(freq[0]) if freq else 0
    sampling = "sampling on" if "running: sampling on" in running else \
        running[:80] or "no running: line"
    check("which workload pays: the sampler under the unit (paranoid 2 by the package's sysctl "
          "file; sample-frequency, interval in the config)",
          f"sampling on, {SAMPLE_HZ} Hz, paranoid 2",
          f"{sampling}, {hz} Hz, paranoid {f.get('workload_paranoid')}",
          ok=sampling == "sampling on" and hz == SAMPLE_HZ and f.get("workload_paranoid") == "2")
    info("  the config for the restart after kill -9", "; ".join(f.get("workload_config") or []))
    check("  perf record -G: enabled for the work (its control fifo's ack)", "ack",
          f.get("workload_perf_enable"))
    if f.get("workload_perf_enable") != "ack":  # what perf said instead
        info("  perf record's output", (f.get("workload_perf_record_log") or "none")[-300:])
    done = f.get("workload_done") or {}
    pairs = f.get("workload_pairs")
    check("  units huc-three, huc-one: udp_pairs exit status", "0 0",
          " ".join(str(done.get(u, {}).get("rc", "missing")) for u in WORKLOADS))
    info("  the work (units side by side)", "; ".join(
        f"{u}: {n} x {pairs} pairs (one process each) in "
        f"{done[u]['end'] - done[u]['start']:.1f} s from {done[u]['start']:.1f} s"
        for u, n in WORKLOADS.items() if u in done))
    checks_after = workload_counts(after, "usercopy_workload_cpu_seconds_total")
    checks_before = workload_counts(before, "usercopy_workload_cpu_seconds_total")
    busy_after = workload_counts(after, "usercopy_workload_busy_cpu_seconds_total")
    busy_before = workload_counts(before, "usercopy_workload_busy_cpu_seconds_total")
    check(f'  /metrics names them: workload="{three}" and "{one}", workload_kind="unit"',
          "unit unit", " ".join(checks_after.get(w, ("absent", 0))[0] for w in (three, one)))
    # Seconds back to samples: each cpu-clock sample is NSEC_PER_SEC // hz ns (core/kernel/cpu_time.h).
    period = (10**9 // hz) / 1e9 if hz else 0

    def samples(after_, before_, w):
        if not period:
            return 0.0
        return (after_.get(w, ("", 0))[1] - before_.get(w, ("", 0))[1]) / period

    h3, h1 = (samples(checks_after, checks_before, w) for w in (three, one))
    perf = f.get("workload_perf") or {}
    p3, p1 = (perf.get(u, {}).get("in_check", 0) for u in WORKLOADS)
    for who, a, b in (("hucprof (/metrics delta)", h3, h1), ("perf -G <unit's cgroup>", p3, p1)):
        share, n, tol = split(a, b)
        check(f"  {who}: huc-three's share of the checks' CPU, 3 of 4 units (4 sigma + 0.02)",
              f"0.75 +- {tol:.3f}, >= {MIN_CHECK_SAMPLES} samples",
              f"{share:.3f} ({a:.0f} + {b:.0f} samples in the checks)",
              ok=n >= MIN_CHECK_SAMPLES and abs(share - 0.75) <= tol)
    (hs, hn, _), (ps, pn, _) = split(h3, h1), split(p3, p1)
    pooled = (h3 + p3) / (hn + pn) if hn and pn else 0.5
    tol = 4 * (pooled * (1 - pooled) * (1 / max(hn, 1) + 1 / max(pn, 1))) ** 0.5 + 0.02
    check("  hucprof's split = perf's (4 sigma of both binomials + 0.02)", f"|diff| <= {tol:.3f}",
          f"{hs:.3f} - {ps:.3f} = {hs - ps:+.3f}", ok=bool(hn and pn) and abs(hs - ps) <= tol)
    script = f.get("workload_perf_script") or ["", None, ""]
    check("  perf script exit status", 0, script[1])
    if script[1] != 0:
        info("  perf script's stderr", (script[2] or "none")[-300:])
    usage = f.get("workload_cpu_usage_ns") or {}
    for u in WORKLOADS:
        w = f"{u}.service"
        busy = samples(busy_after, busy_before, w) * period
        cpu = int(usage[u]) / 1e9 if str(usage.get(u, "")).isdigit() else None
        pc = perf.get(u, {})
        info(f"  {w}: busy CPU hucprof / perf / systemd (CPUUsageNSec)",
             f"{busy:.2f} / {pc.get('samples', 0) * period:.2f} / "
             f"{'?' if cpu is None else f'{cpu:.2f}'} s; in the checks "
             f"{samples(checks_after, checks_before, w) * period:.2f} / "
             f"{pc.get('in_check', 0) * period:.2f} s (perf: {pc.get('interrupted', 0)} "
             f"interrupted in a check)")
    info("  guest time: waiting for perf, work, perf script", f"{f.get('workload_perf_wait_s')} s, "
         f"{f.get('workload_s')} s, {f.get('workload_perf_script_s')} s")


def print_table(rows: list[Row]) -> None:
    w0 = max(len(r.what) for r in rows)
    w1 = max(len(r.expected or "-") for r in rows)
    print(f"{'check':<{w0}}  {'expected':<{w1}}  {'':4}  got")
    print(f"{'-' * w0}  {'-' * w1}  ----  {'-' * 20}")
    for r in rows:
        flag = "info" if r.expected is None else ("ok" if r.ok else "FAIL")
        print(f"{r.what:<{w0}}  {(r.expected or '-'):<{w1}}  {flag:4}  {r.got}")
    sys.stdout.flush()


def show_file(path: Path, title: str, n: int = 80) -> None:
    if path.exists():
        lines = path.read_text(errors="replace").splitlines()
        print(f"--- {title} ({path}, last {min(n, len(lines))} of {len(lines)} lines) ---")
        print("\n".join(lines[-n:]))


# --------------------------------------------------------------------------------------------

def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("build_dir", type=Path)
    ap.add_argument("--hucprof", type=Path, help="the built daemon (default BUILD/daemon/hucprof)")
    ap.add_argument("--kernel", default="6.1", choices=list(KERNELS))
    ap.add_argument("--timeout", type=float, default=480,
                    help="hard timeout of the VM run, s (the run took 272 s at host load 13)")
    ap.add_argument("--cmdline", default="",
                    help="appended to the guest kernel command line (e.g. systemd.log_level=debug)")
    ap.add_argument("--verbose", "-v", action="store_true", help="echo the guest console live")
    args = ap.parse_args()

    t_start = time.monotonic()
    build = args.build_dir.resolve()
    hucprof = (args.hucprof or build / "daemon" / "hucprof").resolve()
    cache = build / "vm-cache"
    cache.mkdir(parents=True, exist_ok=True)
    res_dir = build / "vm-runs" / f"systemd-{args.kernel}"
    res_dir.parent.mkdir(parents=True, exist_ok=True)
    try:
        qemu_run.preflight()
        k = kernel_packages.resolve_kernel(args.kernel, KERNELS[args.kernel], cache, {})
        initrd = cache / f"initramfs-systemd-{k.release}.cpio"
        build_initramfs(k, initrd)
        try:
            deb = debian_package.ensure_deb(build, hucprof, log)
        except debian_package.PackageError as e:
            raise VmFailure(str(e)) from e
        # The clean root has no compiler and no test tools: a static udp_pairs, read from /host.
        pairs_bin = vmlib.compile_c(VM / "workloads" / "udp_pairs.c",
                                    cache / "bin" / "udp_pairs-static",
                                    cflags=("-O2", "-Wall", "-Wextra", "-Werror", "-static"))
        if not HOST_PERF.exists():
            raise VmFailure(f"{HOST_PERF} not found: the workload split's reference is Debian's "
                            "perf of the host root (linux-perf, scripts/install-deps.sh)")
        t_root = time.monotonic()
        root = ensure_root(cache, deb)
        root_s = time.monotonic() - t_root
        seed = dpkg_seed(cache, root)
        t_vm = time.monotonic()
        res = qemu_run.run_vm(k, initrd, GUEST / "checks.py", res_dir,
                           extra_cmdline=f"hucsd.guest={GUEST} hucsd.root={root} hucsd.seed={seed} "
                                         f"systemd.unit=hucvm.target systemd.show_status=error "
                                         f"{args.cmdline}",
                           env={"HUCVM_DEB": "/host" + str(deb), "HUCVM_PORT": str(listen_port()),
                                "HUCVM_ROOT": str(root),
                                "HUCVM_PAIRS_BIN": "/host" + str(pairs_bin),
                                "HUCVM_WORK_PAIRS": str(WORK_PAIRS),
                                "HUCVM_SAMPLE_HZ": str(SAMPLE_HZ), "HUCVM_DRAIN": DRAIN,
                                "HUCVM_PERF": str(HOST_PERF)},
                           timeout_s=args.timeout, echo_console=args.verbose)
    except Skip as e:
        print(f"SKIP: {e}")
        return vmlib.SKIP
    except VmFailure as e:
        print(f"FAIL: {e}")
        for name in ("journal-emergency.txt", "journal-rescue.txt", "journal.txt"):
            show_file(res_dir / name, f"guest {name}", 120)
        return 1

    facts_path = res.file("facts.json")
    facts = json.loads(facts_path.read_text()) if facts_path.exists() else {}
    switch = None
    try:
        switch = float(res.file(".hucsd-switch-uptime").read_text().split()[0])
    except (OSError, ValueError, IndexError):
        pass
    print(f"\n== hucprof.service under systemd, kernel {k.label} ({k.release}), "
          f"results in {res.results_dir}")
    rows = evaluate(facts, res.results_dir) if facts else []
    failures = []
    if res.guest_rc != 0:
        failures.append(f"guest checks exited {res.guest_rc}")
    if not facts:
        failures.append("guest wrote no facts.json")
    if rows:
        print_table(rows)
    # Anything PID 1 complained about (unknown/ignored settings, failures) besides the
    # consequences of our own kill -9.
    expected = ("code=killed, status=9/KILL", "Failed with result 'signal'")
    for line in facts.get("pid1_about_unit", []):
        if re.search(r"ignor|unknown|invalid|fail|deprecat|warn|not supported", line, re.I) \
                and not any(e in line for e in expected):
            print(f"   systemd about the unit: {line}")
    total = time.monotonic() - t_start
    print("\n== timings")
    print(f"   qemu wall {res.wall_s:.1f}s; guest clock: switch_root to systemd "
          f"{switch or 0:.2f}s, test runner started {res.boot_to_test_s or 0:.2f}s, "
          f"checks {res.test_s or 0:.2f}s; steps: "
          + ", ".join(f"{k} {v}s" for k, v in facts.get("steps", {}).items()))
    print(f"   total {total:.1f}s (clean root {root_s:.1f}s, VM part {time.monotonic() - t_vm:.1f}s)")
    (res_dir.parent / f"systemd-{args.kernel}.summary.json").write_text(json.dumps(
        {"rows": [dataclasses.asdict(r) for r in rows], "failures": failures,
         "exposure": facts.get("exposure"), "qemu_wall_s": res.wall_s, "total_s": total},
        indent=1))
    bad = [r for r in rows if not r.ok]
    if failures or bad:
        for fl in failures:
            print(f"FAIL: {fl}")
        for r in bad:
            print(f"FAIL: {r.what}: expected {r.expected}, got {r.got}")
        show_file(res.file("hucprof-journal.txt"), "journalctl -u hucprof", 60)
        show_file(res.file("security.txt"), "systemd-analyze security", 200) \
            if any("exposure" in r.what for r in bad) else None
        print(qemu_run.format_console(res, 120))
        return 1
    print(f"PASS: {len(rows)} rows ({sum(r.expected is not None for r in rows)} asserted); "
          f"exposure {facts.get('exposure')}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
