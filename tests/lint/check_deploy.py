#!/usr/bin/env python3
"""Static checks of deploy/ (no root, no network): what the real tools say about our files.

  prometheus  promtool check rules / test rules / check config on the shipped files
  systemd     systemd-analyze security --offline (exposure <= MAX_EXPOSURE) and verify;
              the unit keeps the settings the daemon depends on (capabilities, kallsyms access)
  config      deploy/hucprof.yaml and the DaemonSet's ConfigMap use only known keys, each
              documented by a comment
  kubernetes  DaemonSet keeps the minimal securityContext (needs PyYAML; skipped without)
  grafana     provisioning points at the directory the package installs the dashboards to

A missing tool skips its group with the reason printed. Exit 77 (ctest SKIP_RETURN_CODE) when
every group was skipped, 1 when any check failed.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.normpath(os.path.join(HERE, "..", ".."))
DEPLOY = os.path.join(REPO, "deploy")
sys.path.insert(0, os.path.join(REPO, "tests", "lib"))
from markdown_anchors import markdown_anchors  # noqa: E402

UNIT = os.path.join(DEPLOY, "hucprof.service")
RULES = os.path.join(DEPLOY, "prometheus", "hucprof.rules.yml")
PROM_CONFIG = os.path.join(DEPLOY, "prometheus", "prometheus.yml")
RULES_TEST = os.path.join(HERE, "hucprof.rules.test.yml")
CONFIG = os.path.join(DEPLOY, "hucprof.yaml")
# Keys `hucprof run --config` accepts (daemon/cli/options.h); anything else is exit code 2.
CONFIG_KEYS = {"mode", "web.listen-address", "web", "sample-frequency", "interval", "top-k",
               "latency", "log.level", "web.config.file", "bpf.max-keys", "bpf.max-stacks",
               "prediction.window", "web.telemetry-path", "web.systemd-socket",
               "log.format", "capabilities.keep"}
# Keys documented in a comment only: as shipped the file must change nothing.
COMMENTED_KEYS = {"web.config.file"}
CAPS = {"CAP_BPF", "CAP_PERFMON", "CAP_SYSLOG"}
MAX_EXPOSURE = 3.0
PACKAGE_DASHBOARD_DIR = "/usr/share/hucprof/dashboards"

passed = 0
failed: list[str] = []
skipped: list[str] = []
groups_run = 0


def ok(what: str) -> None:
    global passed
    passed += 1
    print(f"ok   {what}")


def fail(what: str) -> None:
    failed.append(what)
    print(f"FAIL {what}")


def check(cond: bool, what: str) -> None:
    ok(what) if cond else fail(what)


def skip(group: str, reason: str) -> None:
    skipped.append(group)
    print(f"SKIP {group}: {reason}")


def run(cmd: list[str], **kw) -> subprocess.CompletedProcess:
    return subprocess.run(cmd, capture_output=True, text=True, timeout=120, **kw)


# --------------------------------------------------------------------------- prometheus

def check_prometheus() -> None:
    global groups_run
    promtool = shutil.which("promtool")
    if not promtool:
        skip("prometheus", "promtool not installed (Debian package prometheus)")
        return
    groups_run += 1
    r = run([promtool, "check", "rules", RULES])
    check(r.returncode == 0, f"promtool check rules {os.path.relpath(RULES, REPO)}" +
          ("" if r.returncode == 0 else "\n" + r.stdout + r.stderr))
    r = run([promtool, "test", "rules", os.path.basename(RULES_TEST)], cwd=HERE)
    check(r.returncode == 0, f"promtool test rules {os.path.relpath(RULES_TEST, REPO)}" +
          ("" if r.returncode == 0 else "\n" + r.stdout + r.stderr))
    # The example config names the installed rules path; check it against the repository's.
    with open(PROM_CONFIG, encoding="utf-8") as f:
        text = f.read()
    installed = "/usr/share/hucprof/prometheus/hucprof.rules.yml"
    check(installed in text, f"prometheus.yml loads the packaged rules ({installed})")
    with tempfile.TemporaryDirectory() as tmp:
        cfg = os.path.join(tmp, "prometheus.yml")
        with open(cfg, "w", encoding="utf-8") as f:
            f.write(text.replace(installed, RULES))
        r = run([promtool, "check", "config", cfg])
        check(r.returncode == 0, "promtool check config deploy/prometheus/prometheus.yml" +
              ("" if r.returncode == 0 else "\n" + r.stdout + r.stderr))
    check(re.search(r"job_name:\s*hucprof\b", text) is not None,
          "prometheus.yml scrape job is named hucprof (HucprofDown and dashboards expect it)")
    check_runbooks()


def check_runbooks() -> None:
    """Every alert links to its own section of deploy/README.md, all on one base URL."""
    try:
        import yaml  # type: ignore
    except ImportError:
        skip("runbooks", "PyYAML not installed (python3-yaml)")
        return
    with open(RULES, encoding="utf-8") as f:
        rules = [r for g in yaml.safe_load(f)["groups"] for r in g["rules"] if "alert" in r]
    anchors = markdown_anchors(os.path.join(DEPLOY, "README.md"))
    bases = set()
    check(bool(rules), "the rules define alerts")
    for rule in rules:
        url = rule.get("annotations", {}).get("runbook_url", "")
        base, _, anchor = url.partition("#")
        bases.add(base)
        check(base.endswith("/deploy/README.md") and anchor == rule["alert"].lower(),
              f"{rule['alert']}: runbook_url {url!r} is <base>/deploy/README.md#{rule['alert'].lower()}")
        check(anchor in anchors, f"{rule['alert']}: deploy/README.md has the section #{anchor}")
    check(len(bases) == 1, f"every runbook_url on one base ({sorted(bases)})")


# --------------------------------------------------------------------------- systemd

def unit_settings(path: str) -> dict[str, list[str]]:
    settings: dict[str, list[str]] = {}
    with open(path, encoding="utf-8") as f:
        for line in f:
            line = line.strip()
            if not line or line.startswith(("#", ";", "[")):
                continue
            key, _, value = line.partition("=")
            settings.setdefault(key.strip(), []).append(value.strip())
    return settings


def check_systemd() -> None:
    global groups_run
    s = unit_settings(UNIT)
    # Content checks need no tool.
    groups_run += 1
    last = {k: v[-1] for k, v in s.items()}
    check(last.get("Type") == "notify", "unit: Type=notify")
    check(bool(last.get("WatchdogSec")), "unit: WatchdogSec set")
    check(last.get("ExecStart", "").startswith("/usr/bin/hucprof run "), "unit: ExecStart runs /usr/bin/hucprof run")
    check("--config /etc/hucprof/hucprof.yaml" in last.get("ExecStart", ""), "unit: reads /etc/hucprof/hucprof.yaml")
    for key in ("CapabilityBoundingSet", "AmbientCapabilities"):
        check(set(last.get(key, "").split()) == CAPS, f"unit: {key} is exactly {' '.join(sorted(CAPS))}")
    check(last.get("ProtectKernelTunables", "no") == "no",
          "unit: ProtectKernelTunables off (it makes /proc/kallsyms inaccessible)")
    check(last.get("ProtectKernelLogs", "no") == "no",
          "unit: ProtectKernelLogs off (it removes CAP_SYSLOG, zeroing kallsyms addresses)")
    check(last.get("ProcSubset", "all") == "all", "unit: ProcSubset=all (pid would hide /proc/kallsyms)")
    check(last.get("PrivateUsers", "no") == "no", "unit: no PrivateUsers (caps must count in the init user namespace)")
    prevent = set(" ".join(s.get("RestartPreventExitStatus", [])).split())
    check({"1", "2"} <= prevent, "unit: exit codes 1 (permanent attach failure) and 2 (usage) are not restarted")
    check(last.get("Restart") == "on-failure", "unit: Restart=on-failure")
    check("StartLimitBurst" in s and "StartLimitIntervalSec" in s, "unit: restart burst is bounded")
    allowed = " ".join(v for v in s.get("SystemCallFilter", []) if not v.startswith("~"))
    check("bpf" in allowed.split() and "perf_event_open" in allowed.split(),
          "unit: SystemCallFilter allows bpf and perf_event_open")
    check("AF_UNIX" in last.get("RestrictAddressFamilies", ""), "unit: AF_UNIX allowed (sd_notify)")

    analyze = shutil.which("systemd-analyze")
    if not analyze:
        skip("systemd-analyze", "systemd-analyze not installed")
        return
    r = run([analyze, "security", "--offline=yes", "--no-pager", UNIT])
    m = re.search(r"Overall exposure level for hucprof\.service:\s*([0-9.]+)", r.stdout)
    if not m:
        fail(f"systemd-analyze security printed no exposure level:\n{r.stdout}{r.stderr}")
    else:
        exposure = float(m.group(1))
        check(exposure <= MAX_EXPOSURE, f"systemd-analyze security --offline: exposure {exposure} <= {MAX_EXPOSURE}")
        with open(UNIT, encoding="utf-8") as f:
            header = f.read()
        m2 = re.search(r"overall exposure ([0-9.]+)", header)
        check(m2 is not None and float(m2.group(1)) == exposure,
              f"unit header records the current exposure ({exposure})")
    # verify: parse errors and unknown settings. The binary is absent here, so verify a copy
    # whose ExecStart points at an executable that exists.
    with tempfile.TemporaryDirectory() as tmp:
        copy = os.path.join(tmp, "hucprof.service")
        with open(UNIT, encoding="utf-8") as f, open(copy, "w", encoding="utf-8") as g:
            g.write(re.sub(r"^ExecStart=/usr/bin/hucprof", "ExecStart=/bin/true", f.read(), flags=re.M))
        r = run([analyze, "verify", "--no-pager", copy])
        out = (r.stdout + r.stderr).strip()
        check(r.returncode == 0 and not out, "systemd-analyze verify: no warnings" + ("" if not out else "\n" + out))
        # The drop-in the unit documents for --web.config.file is valid and costs no exposure.
        drop_in = web_config_drop_in(UNIT)
        check(any(l.startswith("LoadCredential=") for l in drop_in) and
              any("--web.config.file %d/" in l for l in drop_in),
              "unit: documents a LoadCredential= drop-in for --web.config.file")
        with open(copy, "a", encoding="utf-8") as g:
            g.write("\n".join(drop_in).replace("/usr/bin/hucprof", "/bin/true") + "\n")
        r = run([analyze, "verify", "--no-pager", copy])
        out = (r.stdout + r.stderr).strip()
        check(r.returncode == 0 and not out, "systemd-analyze verify with the web config drop-in: no warnings" +
              ("" if not out else "\n" + out))
        r = run([analyze, "security", "--offline=yes", "--no-pager", copy])
        m3 = re.search(r"Overall exposure level for hucprof\.service:\s*([0-9.]+)", r.stdout)
        check(m is not None and m3 is not None and m3.group(1) == m.group(1),
              "the web config drop-in leaves the exposure as it is")


def web_config_drop_in(unit: str) -> list[str]:
    """The commented drop-in of the unit's --web.config.file paragraph, uncommented."""
    with open(unit, encoding="utf-8") as f:
        lines = f.read().splitlines()
    for i, line in enumerate(lines):
        if line == "#   [Service]" and i + 1 < len(lines) and lines[i + 1].startswith("#   LoadCredential="):
            block = []
            for follow in lines[i:]:
                if not follow.startswith("#   "):
                    break
                block.append(follow[4:])
            return block
    return []


# --------------------------------------------------------------------------- config

def top_level_keys(text: str) -> list[tuple[int, str]]:
    keys = []
    for i, line in enumerate(text.split("\n"), 1):
        m = re.match(r"^([A-Za-z][\w.-]*):", line)
        if m:
            keys.append((i, m.group(1)))
    return keys


def check_config() -> None:
    global groups_run
    groups_run += 1
    with open(CONFIG, encoding="utf-8") as f:
        text = f.read()
    lines = text.split("\n")
    keys = top_level_keys(text)
    check(bool(keys), "hucprof.yaml has keys")
    for lineno, key in keys:
        check(key in CONFIG_KEYS, f"hucprof.yaml:{lineno}: key {key!r} is one the daemon knows")
        check(lineno >= 2 and lines[lineno - 2].startswith("#"), f"hucprof.yaml:{lineno}: key {key!r} is documented by a comment")
    check({k for _, k in keys} == CONFIG_KEYS - {"web"} - COMMENTED_KEYS, "hucprof.yaml documents every key")
    for key in COMMENTED_KEYS:
        check(any(l.startswith("#") and f"{key}:" in l for l in lines), f"hucprof.yaml: {key} documented in a comment")


# --------------------------------------------------------------------------- kubernetes

def check_kubernetes() -> None:
    global groups_run
    try:
        import yaml  # type: ignore
    except ImportError:
        skip("kubernetes", "PyYAML not installed (python3-yaml); structure not checked")
        return
    groups_run += 1
    with open(os.path.join(DEPLOY, "kubernetes", "daemonset.yaml"), encoding="utf-8") as f:
        docs = [d for d in yaml.safe_load_all(f) if d]
    kinds = {d["kind"]: d for d in docs}
    check({"Namespace", "ConfigMap", "DaemonSet"} <= set(kinds), "daemonset.yaml: Namespace, ConfigMap, DaemonSet")
    ds = kinds.get("DaemonSet", {})
    pod = ds.get("spec", {}).get("template", {}).get("spec", {})
    ann = ds.get("spec", {}).get("template", {}).get("metadata", {}).get("annotations", {})
    check(ann.get("prometheus.io/scrape") == "true" and ann.get("prometheus.io/port") == "9478",
          "daemonset.yaml: prometheus.io scrape annotations")
    check(not pod.get("hostPID") and not pod.get("hostNetwork"), "daemonset.yaml: no hostPID, no hostNetwork")
    c = (pod.get("containers") or [{}])[0]
    sc = c.get("securityContext", {})
    caps = sc.get("capabilities", {})
    check(caps.get("drop") == ["ALL"], "daemonset.yaml: capabilities drop ALL")
    check(set(caps.get("add", [])) == {"BPF", "PERFMON", "SYSLOG"}, "daemonset.yaml: capabilities add exactly BPF PERFMON SYSLOG")
    check(sc.get("privileged") is False and sc.get("allowPrivilegeEscalation") is False,
          "daemonset.yaml: not privileged, no privilege escalation")
    check(sc.get("readOnlyRootFilesystem") is True, "daemonset.yaml: read-only root file system")
    mounts = {m["mountPath"]: m for m in c.get("volumeMounts", [])}
    check(mounts.get("/sys/kernel/btf", {}).get("readOnly") is True, "daemonset.yaml: /sys/kernel/btf mounted read-only")
    check(all(m.get("readOnly") for m in mounts.values()), "daemonset.yaml: every mount read-only")
    # hucprof reads no environment variable of its own; one set here would only mislead.
    check(not c.get("env"), "daemonset.yaml: no environment variables (hucprof reads none)")
    probes = {k: c.get(k, {}).get("httpGet", {}) for k in ("startupProbe", "readinessProbe",
                                                            "livenessProbe")}
    check(probes["startupProbe"].get("path") == "/-/ready" and
          probes["readinessProbe"].get("path") == "/-/ready" and
          probes["livenessProbe"].get("path") == "/-/healthy" and
          all(p.get("port") == "metrics" for p in probes.values()),
          "daemonset.yaml: startup/readiness probe /-/ready, liveness /-/healthy")
    check([p.get("name") for p in c.get("ports", [])] == ["metrics"],
          "daemonset.yaml: the port is named metrics (the scrapers' relabeling keeps it)")
    cm = kinds.get("ConfigMap", {}).get("data", {}).get("hucprof.yaml", "")
    for _, key in top_level_keys(cm):
        check(key in CONFIG_KEYS, f"daemonset.yaml ConfigMap: key {key!r} is one the daemon knows")
    with open(os.path.join(DEPLOY, "kubernetes", "servicemonitor.yaml"), encoding="utf-8") as f:
        sm = {d["kind"]: d for d in yaml.safe_load_all(f) if d}
    check({"Service", "ServiceMonitor"} <= set(sm), "servicemonitor.yaml: Service and ServiceMonitor")
    labels = sm.get("Service", {}).get("spec", {}).get("selector", {})
    check(labels == ds.get("spec", {}).get("selector", {}).get("matchLabels"), "servicemonitor.yaml: Service selects the DaemonSet's pods")


# --------------------------------------------------------------------------- grafana

def check_grafana() -> None:
    global groups_run
    groups_run += 1
    path = os.path.join(DEPLOY, "grafana", "provisioning", "dashboards", "hucprof.yaml")
    with open(path, encoding="utf-8") as f:
        text = f.read()
    check(re.search(r"^\s*path:\s*" + re.escape(PACKAGE_DASHBOARD_DIR) + r"\s*$", text, re.M) is not None,
          f"grafana dashboard provider reads {PACKAGE_DASHBOARD_DIR}")
    ds = os.path.join(DEPLOY, "grafana", "provisioning", "datasources")
    check(any(n.endswith((".yaml", ".yml")) for n in os.listdir(ds)), "grafana data source provisioning present")


def main() -> int:
    for group in (check_prometheus, check_systemd, check_config, check_kubernetes, check_grafana):
        group()
    print(f"{passed} passed, {len(failed)} failed, {len(skipped)} skipped")
    if failed:
        return 1
    return 77 if groups_run == 0 else 0


if __name__ == "__main__":
    sys.exit(main())
