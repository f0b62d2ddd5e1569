#!/usr/bin/env python3
"""vm_systemd: hucprof.service under a real systemd (PID 1) in a Debian kernel under QEMU.

The guest root is an overlayfs (read-only 9p host root below, tmpfs above), so the host's own
systemd 252, dpkg and libraries run unchanged and nothing is written to the host. In the guest:
`dpkg -i` the package built by cpack, `systemctl start hucprof`, then check that it is active,
serves /metrics with the usercopy probe attached, runs with exactly the unit's capabilities
(/proc/PID/status), is restarted after `kill -9`, stops cleanly, and that
`systemd-analyze security` rates the unit at most MAX_EXPOSURE.

Usage: vm_systemd.py BUILD_DIR [--hucprof BINARY] [--kernel 6.1|6.12] [--timeout S]
                      [--cmdline 'systemd.log_level=debug'] [-v]
Exit: 0 pass, 1 fail, 77 skip (no qemu, static busybox or kernel package).
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import re
import shutil
import subprocess
import sys
import time
from pathlib import Path

sys.dont_write_bytecode = True  # keep the source tree clean
HERE = Path(__file__).resolve().parent
VM = HERE.parent
REPO = VM.parent.parent
sys.path.insert(0, str(VM))
sys.path.insert(0, str(REPO / "tests" / "lib"))
import hucprof_testlib as tl  # noqa: E402
import vmlib  # noqa: E402
from vmlib import Skip, VmFailure, log  # noqa: E402

# Kernel label -> Debian meta package (the same packages as vm_tier.KERNELS; not imported from
# there so this test does not depend on the phase-specific code of the tier).
KERNELS = {"6.1": "linux-image-amd64", "6.12": "linux-image-6.12-amd64"}
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
# sd-messages.h: "Deactivated successfully." / "Failed with result '...'."
SD_MESSAGE_UNIT_SUCCESS = "7ad2d189f7e94e70a38c781354912448"
SD_MESSAGE_UNIT_FAILURE_RESULT = "d9b373ed55a64feb8242e02dbe79a49c"


# --------------------------------------------------------------------------------------------
# Host preparation: initramfs (vmlib's modules + overlay, our init) and the .deb
# --------------------------------------------------------------------------------------------

def build_initramfs(k: vmlib.Kernel, out: Path) -> list[str]:
    """vmlib's initramfs with overlayfs added and guest/init.sh (overlay + switch_root)."""
    mods = vmlib.resolve_modules(k, vmlib.optional_modules(k, vmlib.GUEST_MODULES) + ["overlay"])
    for old in out.parent.glob("initramfs-systemd-*.cpio"):
        if old != out:
            old.unlink(missing_ok=True)
    return vmlib.write_initramfs(out, GUEST_INIT, mods, [Path(__file__)])


def ensure_deb(build: Path, hucprof: Path) -> Path:
    """The package cpack makes from this build tree, rebuilt when any of its inputs is newer."""
    if not hucprof.is_file():
        raise VmFailure(f"hucprof is not built ({hucprof}); build the tree before running ctest")
    config = build / "CPackConfig.cmake"
    if not config.is_file():
        raise VmFailure(f"{config} missing: configure {build} with cmake first")
    for tool in ("cpack", "dpkg-deb", "dpkg-shlibdeps"):
        if shutil.which(tool) is None:
            raise VmFailure(f"{tool} not installed: cannot build the .deb to install in the guest")
    out = build / "vm-cache" / "deb"
    debs = sorted(out.glob("hucprof_*.deb"))
    inputs = [hucprof, config, REPO / "cmake" / "Packaging.cmake",
              *(REPO / "deploy").glob("hucprof.*"), *(REPO / "deploy" / "debian").glob("*")]
    newest = max(p.stat().st_mtime for p in inputs if p.exists())
    if len(debs) == 1 and debs[0].stat().st_mtime >= newest:
        return debs[0]
    shutil.rmtree(out, ignore_errors=True)
    out.mkdir(parents=True)
    log(f"cpack -G DEB -B {out}")
    t = time.monotonic()
    r = subprocess.run(["cpack", "-G", "DEB", "-B", str(out), "--config", str(config)],
                       capture_output=True, text=True, timeout=300)
    debs = sorted(out.glob("hucprof_*.deb"))
    if r.returncode != 0 or len(debs) != 1:
        raise VmFailure(f"cpack failed (rc={r.returncode}):\n{(r.stdout + r.stderr)[-3000:]}")
    shutil.rmtree(out / "_CPack_Packages", ignore_errors=True)
    log(f"built {debs[0].name} ({debs[0].stat().st_size >> 10} KiB) in {time.monotonic() - t:.1f}s")
    return debs[0]


def dpkg_seed(cache: Path) -> Path:
    """A tar of the host's /var/lib/dpkg, made now, that the guest's init unpacks into the
    overlay's upper layer: dpkg -i reads every *.list file, and one sequential 9p read of a tar
    costs far less under emulation than thousands of small opens. Same bytes as the lower layer."""
    out = cache / "dpkg-seed.tar"
    tmp = out.with_suffix(".tmp")
    r = subprocess.run(["tar", "-C", "/", "-cf", str(tmp), "var/lib/dpkg"], capture_output=True,
                       text=True)
    if r.returncode not in (0, 1):  # 1: a file changed while being read (apt running): fine
        raise VmFailure(f"tar of /var/lib/dpkg failed: {r.stderr.strip()}")
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
    check("root file system (overlay: 9p lower, tmpfs upper)", "overlay", f.get("root_fstype"))
    info("kernel", f.get("kernel"))
    info("systemd", f.get("systemd_version"))
    info("system state before the test", f"{f.get('system_state')}; failed units: "
         f"{' '.join(f.get('failed_units') or []) or 'none'}")
    info("boot", (f.get("boot_time") or "").splitlines()[0] if f.get("boot_time") else "?")

    # Install and start
    check("dpkg -i hucprof_*.deb exit status", 0, f.get("dpkg_rc"))
    info("  dpkg -i took", f"{f.get('dpkg_s')} s")
    loaded = f.get("show_loaded", {})
    check("unit loaded from the package", "loaded /lib/systemd/system/hucprof.service",
          f"{loaded.get('LoadState')} {loaded.get('FragmentPath')}")
    check("systemctl start hucprof exit status", 0, f.get("start_rc"))
    info("  systemctl start took (Type=notify: until READY=1)", f"{f.get('start_s')} s")
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
    # ambient set; without CAP_SETPCAP the rest stays in the bounding set (README "Privileges").
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

    check("guest step errors", "none", "; ".join(f.get("errors", [])) or "none")
    return rows


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
        vmlib.preflight()
        k = vmlib.resolve_kernel(args.kernel, KERNELS[args.kernel], cache, {})
        initrd = cache / f"initramfs-systemd-{k.release}.cpio"
        build_initramfs(k, initrd)
        deb = ensure_deb(build, hucprof)
        seed = dpkg_seed(cache)
        t_vm = time.monotonic()
        res = vmlib.run_vm(k, initrd, GUEST / "checks.py", res_dir,
                           extra_cmdline=f"hucsd.guest={GUEST} hucsd.seed={seed} systemd.unit=hucvm.target "
                                         f"systemd.show_status=error {args.cmdline}",
                           env={"HUCVM_DEB": str(deb), "HUCVM_PORT": str(listen_port())},
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
    print(f"   total {total:.1f}s (VM part {time.monotonic() - t_vm:.1f}s)")
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
        print(vmlib.format_console(res, 120))
        return 1
    print(f"PASS: {len(rows)} rows ({sum(r.expected is not None for r in rows)} asserted); "
          f"exposure {facts.get('exposure')}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
