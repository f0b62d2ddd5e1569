#!/usr/bin/env python3
"""vm_systemd's judgement without a VM: the facts of a real guest run (testdata/, Debian 6.1,
systemd 252, the clean bookworm root) must pass, and each planted defect must fail exactly the
row that covers it.

Usage: test_evaluate.py        Exit 0 pass, 1 fail. Seconds, no root, no qemu.
"""

import copy
import json
import sys
import tempfile
from pathlib import Path

sys.dont_write_bytecode = True  # keep the source tree clean
HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
import vm_systemd as vs  # noqa: E402

DATA = HERE / "testdata"
SYS_ADMIN_TOO = f"{int(vs.mask_of(vs.EXPECTED_CAPS), 16) | 1 << 21:016x}"


def failing(facts: dict, metrics: str) -> list[str]:
    with tempfile.TemporaryDirectory(prefix="vm-systemd-eval-") as tmp:
        (Path(tmp) / "metrics-start.txt").write_text(metrics)
        return [r.what.strip() for r in vs.evaluate(facts, Path(tmp)) if not r.ok]


def main() -> int:
    base = json.loads((DATA / "facts.json").read_text())
    metrics = (DATA / "metrics-start.txt").read_text()
    bad = []

    def check(cond, what):
        print(f"{'ok  ' if cond else 'FAIL'} {what}", flush=True)
        if not cond:
            bad.append(what)

    got = failing(base, metrics)
    check(got == [], f"the captured run passes (failing rows: {got})")

    def mutate(what, expect_row, fn, metrics_fn=None):
        f = copy.deepcopy(base)
        fn(f)
        rows = failing(f, metrics_fn(metrics) if metrics_fn else metrics)
        check(any(expect_row in r for r in rows), f"{what} -> FAIL '{expect_row}' (got {rows})")

    mutate("CAP_SYS_ADMIN in CapEff", "/proc/PID/status CapEff",
           lambda f: f["status_started"].update(CapEff=SYS_ADMIN_TOO))
    mutate("CAP_SYS_ADMIN in CapBnd after the restart", "restarted: /proc/PID/status CapBnd",
           lambda f: f["status_restarted"].update(CapBnd=SYS_ADMIN_TOO))
    mutate("CAP_BPF still effective after the drop", "/proc/PID/status CapEff",
           lambda f: f["status_started"].update(CapEff=vs.mask_of(vs.EXPECTED_CAPS)))
    mutate("ambient set not emptied", "restarted: /proc/PID/status CapAmb",
           lambda f: f["status_restarted"].update(CapAmb=vs.mask_of(vs.EXPECTED_CAPS)))
    mutate("CapPrm missing CAP_SYSLOG", "/proc/PID/status CapPrm",
           lambda f: f["status_started"].update(CapPrm=f"{0xc000000000:016x}"))
    mutate("unit grants CAP_SYS_ADMIN too", "unit CapabilityBoundingSet=",
           lambda f: f.update(unit_file=f["unit_file"].replace(
               "CapabilityBoundingSet=CAP_BPF", "CapabilityBoundingSet=CAP_SYS_ADMIN CAP_BPF")))
    mutate("root uid", "dynamic user",
           lambda f: f["status_started"].update(Uid="0\t0\t0\t0"))
    mutate("exposure 3.4", "systemd-analyze security exposure",
           lambda f: f.update(exposure=3.4))
    mutate("no exposure line", "systemd-analyze security exposure",
           lambda f: f.update(exposure=None))
    mutate("same MainPID after kill -9", "kill -9 MainPID",
           lambda f: f.update(kill_new_pid=f["kill_old_pid"]))
    mutate("no restart counted", "NRestarts",
           lambda f: f["show_restarted"].update(NRestarts="0"))
    mutate("stop exits 1", "main process exit",
           lambda f: f["show_stopped"].update(ExecMainStatus="1"))
    mutate("stop killed by SIGKILL (TimeoutStopSec)", "journal: systemd says the stop was clean",
           lambda f: f.update(stop_journal=[{"id": vs.SD_MESSAGE_UNIT_FAILURE_RESULT, "pid1": True,
                                             "message": "hucprof.service: Failed with result "
                                                        "'timeout'."}]))
    mutate("still active after stop", "state after stop",
           lambda f: f["show_stopped"].update(ActiveState="active", SubState="running"))
    mutate("systemctl enable --now fails", "systemctl enable --now hucprof exit status",
           lambda f: f.update(start_rc=1))
    mutate("PID 1 is not systemd", "PID 1", lambda f: f.update(pid1="init"))
    mutate("probe not attached", "hucprof_probe_attached", lambda f: None,
           lambda m: m.replace('hucprof_probe_attached{target="__check_object_size",mode="fentry"} 1',
                               'hucprof_probe_attached{target="__check_object_size",mode="none"} 0'))
    mutate("hardened usercopy reported off", "usercopy_hardened_enabled", lambda f: None,
           lambda m: m.replace("usercopy_hardened_enabled 1", "usercopy_hardened_enabled 0"))
    mutate("a dependency the root lacks", "Depends are all satisfied",
           lambda f: f.update(dpkg_unmet=["libbpf1 (>= 1:0.8.0)"]))
    mutate("installing enables the unit", "installing enables nothing",
           lambda f: f.update(is_enabled_installed="enabled"))
    mutate("installing starts the unit", "installing starts nothing",
           lambda f: f.update(is_active_installed="active"))
    mutate("config not a conffile", "is a conffile", lambda f: f.update(conffiles=[]))
    mutate("/-/ready 503", "GET /-/healthy, /-/ready",
           lambda f: f.update(ready=[503, "hucprof is not ready"]))
    mutate("an info line under -p warning", "journalctl -p warning",
           lambda f: f["journal_warning"].append(
               {"MESSAGE": "info: serving metrics on http://[::]:9478/metrics", "PRIORITY": "6"}))
    mutate("lines without a priority (stderr without prefix)", "carry a priority",
           lambda f: [e.pop("PRIORITY", None) for e in f["journal_info"]])
    mutate("no warning at all", "journalctl -p warning",
           lambda f: f.update(journal_warning=[]))
    mutate("the sampler's warning without ERRNO", "the sampler's warning has its fields",
           lambda f: [e.pop("ERRNO", None) for e in f["journal_warning"]])
    mutate("purge fails", "dpkg --purge hucprof exit status", lambda f: f.update(purge_rc=100))
    mutate("the conffile stays after purge", "the root is as before",
           lambda f: f.update(purge_added=["/etc/hucprof/hucprof.yaml f 100 100644 0:0"]))
    mutate("the enablement symlink stays after purge", "the root is as before",
           lambda f: f.update(purge_added=[
               "/etc/systemd/system/multi-user.target.wants/hucprof.service l "
               "/lib/systemd/system/hucprof.service 120777 0:0"]))
    mutate("still known to systemd after purge", "systemd knows hucprof.service no more",
           lambda f: f.update(purge_load_state="loaded"))
    mutate("a process left after purge", "no hucprof process left",
           lambda f: f.update(purge_processes="1234 /usr/bin/hucprof run"))
    # Which workload pays
    checks_of = 'usercopy_workload_cpu_seconds_total{workload="%s.service"'
    three_line = [l for l in base["workload_metrics_after"]
                  if l.startswith(checks_of % "huc-three")]

    def as_cgroup(f):  # the unit named by its cgroup path, as on a host without the unit rule
        f["workload_metrics_after"] = [
            l.replace('workload="huc-three.service",workload_kind="unit"',
                      'workload="/system.slice/huc-three.service",workload_kind="cgroup"')
            for l in f["workload_metrics_after"]]

    def equal_split(f):  # huc-three's checks counted like huc-one's (samples keyed wrongly)
        one = [l for l in f["workload_metrics_after"]
               if l.startswith(checks_of % "huc-one")][0].split()[-1]
        f["workload_metrics_after"] = [l.rsplit(" ", 1)[0] + " " + one if l in three_line else l
                                       for l in f["workload_metrics_after"]]

    def perf_equal(f):  # perf counts huc-three's checks like huc-one's
        f["workload_perf"]["huc-three"]["in_check"] = f["workload_perf"]["huc-one"]["in_check"]

    def few_samples(f):  # 99 Hz under emulation: a split of a few dozen samples says nothing
        for u in f["workload_perf"].values():
            u["in_check"] //= 20

    mutate("a unit named by its cgroup path", "/metrics names them", as_cgroup)
    mutate("hucprof splits the checks 1:1", "hucprof (/metrics delta): huc-three's share",
           equal_split)
    mutate("... and so disagrees with perf", "hucprof's split = perf's", equal_split)
    mutate("perf's split 1:1", "perf -G <unit's cgroup>: huc-three's share", perf_equal)
    mutate("too few samples in the checks", "perf -G <unit's cgroup>: huc-three's share",
           few_samples)
    mutate("sampler off under the unit", "the sampler under the unit",
           lambda f: f.update(workload_running=["info: running: sampling off, probes on (fentry)"]))
    mutate("paranoid still 3", "the sampler under the unit",
           lambda f: f.update(workload_paranoid="3"))
    mutate("a unit's work failed", "udp_pairs exit status",
           lambda f: f["workload_done"]["huc-one"].update(rc=2))
    mutate("perf never set up", "perf record -G: enabled for the work",
           lambda f: f.update(workload_perf_enable="no reader on the control fifo"))
    mutate("perf script failed", "perf script exit status",
           lambda f: f["workload_perf_script"].__setitem__(1, 255))
    mutate("guest step error", "guest step errors",
           lambda f: f["errors"].append("kill9: RuntimeError: no MainPID to kill"))
    print(f"{'PASS' if not bad else 'FAIL'}: {len(bad)} failed")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
