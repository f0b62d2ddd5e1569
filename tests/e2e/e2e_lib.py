"""Building blocks of hucprof's end-to-end tests (stdlib and tests/lib), reusable by other tiers:

  free_port() http_get()  tests/lib/hucprof_testlib's, re-exported with its /metrics parser
  parse_metrics() select() total()
  Managed                 a child process with a log file, stopped by SIGTERM (then SIGKILL)
  HucprofInstance         `hucprof run` on a loopback port, /metrics fetch, clean-stop check
  Flood                   the bounded loopback UDP flood (huc_udp_flood)
  PrometheusServer        a throw-away Prometheus (temp storage, generated config) + HTTP API
  prometheus_config()     the generated scrape + rules configuration
  substitute_grafana()    Grafana's template/builtin variables -> concrete PromQL

Everything listens on 127.0.0.1 only and every process is bounded in time by its caller.
"""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
import time
import urllib.error
import urllib.parse

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lib"))
# The tiers' shared port, fetch and /metrics parser, re-exported for the e2e scripts.
from hucprof_testlib import free_port, http_get, parse_metrics, select, total  # noqa: E402,F401


class Managed:
    """A child process whose output goes to a log file."""

    def __init__(self, name: str, cmd: list[str], log_path: str):
        self.name, self.cmd, self.log_path = name, cmd, log_path
        self.proc: subprocess.Popen | None = None
        self._log = None

    def start(self) -> None:
        self._log = open(self.log_path, "wb")
        self.proc = subprocess.Popen(self.cmd, stdout=self._log, stderr=subprocess.STDOUT,
                                     stdin=subprocess.DEVNULL)

    def alive(self) -> bool:
        return self.proc is not None and self.proc.poll() is None

    def stop(self, timeout: float = 10.0) -> tuple[int | None, bool]:
        """SIGTERM, wait; SIGKILL after timeout. Returns (exit code, stopped by SIGTERM alone)."""
        if self.proc is None:
            return None, False
        clean = True
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(timeout=timeout)
            except subprocess.TimeoutExpired:
                clean = False
                self.proc.kill()
                self.proc.wait(timeout=10)
        if self._log:
            self._log.close()
            self._log = None
        return self.proc.returncode, clean

    def log_tail(self, lines: int = 30) -> str:
        try:
            with open(self.log_path, "rb") as f:
                return "\n".join(f.read().decode("utf-8", "replace").splitlines()[-lines:])
        except OSError:
            return "(no log)"


class HucprofInstance(Managed):
    def __init__(self, binary: str, index: int, workdir: str, extra_args: list[str],
                 config: str | None = None):
        self.port = free_port()
        self.address = f"127.0.0.1:{self.port}"
        cmd = [binary, "run"]
        if config:
            cmd += ["--config", config]
        cmd += extra_args + ["--web.listen-address", self.address]
        super().__init__(f"hucprof[{index}]", cmd, os.path.join(workdir, f"hucprof-{index}.log"))

    def metrics(self, timeout: float = 5.0) -> str | None:
        try:
            status, body = http_get(f"http://{self.address}/metrics", timeout)
        except (OSError, urllib.error.URLError):
            return None
        return body if status == 200 else None

    def wait_serving(self, deadline: float) -> bool:
        while time.monotonic() < deadline:
            if not self.alive():
                return False
            if self.metrics(timeout=2) is not None:
                return True
            time.sleep(0.3)
        return False


class Flood(Managed):
    def __init__(self, binary: str, seconds: int, workdir: str, payload: int = 1024, senders: int = 1):
        super().__init__("udp-flood", [binary, "--seconds", str(seconds), "--payload", str(payload),
                                       "--senders", str(senders)], os.path.join(workdir, "flood.log"))


def prometheus_config(targets: list[str], rule_files: list[str], interval: str = "1s",
                      job: str = "hucprof") -> str:
    """A Prometheus config (JSON is YAML) scraping `targets` as one job, with `rule_files`."""
    cfg = {
        "global": {"scrape_interval": interval, "scrape_timeout": interval, "evaluation_interval": interval},
        "rule_files": rule_files,
        "scrape_configs": [{"job_name": job, "static_configs": [{"targets": targets}]}],
    }
    return json.dumps(cfg, indent=2) + "\n"


class PrometheusServer(Managed):
    def __init__(self, binary: str, workdir: str, config_text: str):
        self.port = free_port()
        self.base = f"http://127.0.0.1:{self.port}"
        self.config_path = os.path.join(workdir, "prometheus.yml")
        with open(self.config_path, "w", encoding="utf-8") as f:
            f.write(config_text)
        data = os.path.join(workdir, "prometheus-data")
        os.makedirs(data, exist_ok=True)
        super().__init__("prometheus", [
            binary, f"--config.file={self.config_path}", f"--storage.tsdb.path={data}",
            f"--web.listen-address=127.0.0.1:{self.port}", "--storage.tsdb.retention.time=1h",
            "--log.level=warn",
        ], os.path.join(workdir, "prometheus.log"))

    def wait_ready(self, deadline: float) -> bool:
        while time.monotonic() < deadline:
            if not self.alive():
                return False
            try:
                status, _ = http_get(self.base + "/-/ready", 2)
                if status == 200:
                    return True
            except (OSError, urllib.error.URLError):
                pass
            time.sleep(0.3)
        return False

    def api(self, path: str, params: list[tuple[str, str]] | None = None) -> dict:
        url = self.base + path
        if params:
            url += "?" + urllib.parse.urlencode(params)
        status, body = http_get(url, 15)
        try:
            doc = json.loads(body)
        except json.JSONDecodeError:
            raise RuntimeError(f"{path}: HTTP {status}: {body[:300]}")
        if doc.get("status") != "success":
            raise RuntimeError(f"{path}: {doc.get('errorType')}: {doc.get('error')}")
        return doc["data"]

    def query(self, expr: str) -> list:
        """Instant query at the server's now; returns the result list (a scalar as one item)."""
        data = self.api("/api/v1/query", [("query", expr)])
        if data["resultType"] in ("scalar", "string"):
            return [data["result"]]
        return data["result"]

    def label_values(self, label: str, match: str | None) -> list[str]:
        params = [("match[]", match)] if match else []
        params.append(("start", str(time.time() - 600)))
        return self.api(f"/api/v1/label/{label}/values", params)

    def rules(self) -> list[dict]:
        return self.api("/api/v1/rules")["groups"]


# Grafana's built-in interval variables, for a Prometheus scraping every second. Ranges are short
# enough to be covered by the test's ~30 s of data, long enough for rate() to see many points.
GRAFANA_BUILTINS = {
    "__rate_interval": "10s",
    "__interval": "2s",
    "__interval_ms": "2000",
    "__range": "60s",
    "__range_s": "60",
    "__range_ms": "60000",
}


def substitute_grafana(expr: str, values: dict[str, str]) -> str:
    """Replace ${name}, ${name:fmt}, $name and [[name]] by values[name] (longest names first)."""
    def repl_braced(m: re.Match) -> str:
        name = m.group(1)
        return values.get(name, m.group(0))

    out = re.sub(r"\$\{(\w+)(?::\w+)?\}", repl_braced, expr)
    out = re.sub(r"\[\[(\w+)\]\]", repl_braced, out)
    for name in sorted(values, key=len, reverse=True):
        out = re.sub(r"\$" + re.escape(name) + r"(?!\w)", lambda _m, v=values[name]: v, out)
    return out


# --------------------------------------------------------------------------- systemd unit model

def systemd_syscall_groups(analyze: str = "systemd-analyze") -> dict[str, list[str]]:
    """@group -> members (syscalls and nested @groups), from `systemd-analyze syscall-filter`."""
    import subprocess as sp
    out = sp.run([analyze, "syscall-filter", "--no-pager"], capture_output=True, text=True, timeout=60).stdout
    groups: dict[str, list[str]] = {}
    current = None
    for line in out.splitlines():
        if line.startswith("@"):
            current = line.split()[0]
            groups[current] = []
        elif current and line.startswith("    ") and not line.strip().startswith("#"):
            groups[current].append(line.strip())
        elif not line.strip():
            current = None
    return groups


def expand_syscalls(names: list[str], groups: dict[str, list[str]], seen=None) -> set[str]:
    seen = seen if seen is not None else set()
    out: set[str] = set()
    for n in names:
        if n.startswith("@"):
            if n in seen:
                continue
            seen.add(n)
            out |= expand_syscalls(groups.get(n, []), groups, seen)
        else:
            out.add(n)
    return out


def unit_allowed_syscalls(unit_path: str, groups: dict[str, list[str]]) -> set[str]:
    """The allow list a unit's SystemCallFilter= lines produce (systemd.exec(5) semantics: the
    first line decides allow-list mode; later '~' lines remove, plain lines add back; @default
    is always allowed)."""
    allowed: set[str] | None = None
    with open(unit_path, encoding="utf-8") as f:
        for line in f:
            line = line.strip()
            if not line.startswith("SystemCallFilter="):
                continue
            value = line.split("=", 1)[1].strip()
            invert = value.startswith("~")
            names = value.lstrip("~").split()
            calls = expand_syscalls(names, groups)
            if allowed is None:
                if invert:
                    raise ValueError("deny-list SystemCallFilter= not modelled")
                allowed = set(calls)
            elif invert:
                allowed -= calls
            else:
                allowed |= calls
    if allowed is None:
        raise ValueError(f"{unit_path}: no SystemCallFilter=")
    return allowed | expand_syscalls(["@default"], groups)


class Checklist:
    """OK/FAIL/SKIP lines and the closing 'N passed, N failed[, N skipped]' line the script
    tiers print. A check's detail is shown on failure, and on success when show_ok_detail (or
    the call's detail_on_ok) says so."""

    def __init__(self, show_ok_detail: bool = False) -> None:
        self.passed: list[str] = []
        self.failed: list[str] = []
        self.skipped: list[str] = []
        self.show_ok_detail = show_ok_detail

    def ok(self, what: str, detail: str = "") -> None:
        self.passed.append(what)
        print(f"OK   {what}" + (f"  ({detail})" if detail else ""), flush=True)

    def fail(self, what: str, detail: str = "") -> None:
        self.failed.append(what)
        print(f"FAIL {what}" + (f"\n     {detail}" if detail else ""), flush=True)

    def skip(self, what: str, reason: str) -> None:
        self.skipped.append(what)
        print(f"SKIP {what}: {reason}", flush=True)

    def check(self, cond, what: str, detail: str = "", detail_on_ok: bool | None = None):
        if cond:
            show = self.show_ok_detail if detail_on_ok is None else detail_on_ok
            self.ok(what, detail if show else "")
        else:
            self.fail(what, detail)
        return cond

    def summary(self) -> str:
        return (f"{len(self.passed)} passed, {len(self.failed)} failed"
                + (f", {len(self.skipped)} skipped" if self.skipped else ""))

    def finish(self) -> int:
        print(self.summary())
        return 1 if self.failed else 0


def skip_unless_ready(label: str, reasons: list[str]) -> int | None:
    """Exit code 77 (ctest skip) with the reasons printed, or None when there are none."""
    if not reasons:
        return None
    print(f"SKIP {label}: " + "; ".join(reasons))
    print("0 passed, 0 failed, 1 skipped")
    return 77

