#!/usr/bin/env python3
"""End-to-end: a real Prometheus (Debian's) scrapes real hucprof daemons over TLS.

  1. openssl makes a CA, a server certificate (localhost, 127.0.0.1) and a client certificate;
     htpasswd makes the bcrypt hash of a password;
  2. daemon A: `hucprof run --mode sample --web.config.file` with tls_server_config and
     basic_auth_users; daemon B: client_auth_type RequireAndVerifyClientCert (mutual TLS);
  3. Prometheus scrapes them in six jobs — https + tls_config + basic_auth (must be up), wrong
     password, no credentials, plain http to the TLS port (all must be down, with the reason),
     https with the client certificate (up) and without it (down);
  4. the up job's samples are in Prometheus (usercopy_sampled_cpu_samples_total);
  5. both daemons exit 0 on SIGTERM.

Needs root (the daemons attach BPF); exits 77 with the reason when not root or a binary or tool
is missing. Bounded: < 2 minutes. Closing line: 'N passed, N failed, N skipped'.
"""

from __future__ import annotations

import argparse
import base64
import json
import os
import shutil
import ssl
import sys
import tempfile
import time
import urllib.request

HERE = os.path.dirname(os.path.abspath(__file__))
sys.dont_write_bytecode = True
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(HERE, "..", "lib"))
import e2e_lib as lib  # noqa: E402
import web_fixtures as wf  # noqa: E402

PASSWORD = "correct horse battery staple"


def scrape(port: int, pki: dict, user: str | None = None, client_cert: bool = False) -> tuple[int, str]:
    context = ssl.create_default_context(cafile=pki["ca.crt"])
    if client_cert:
        context.load_cert_chain(pki["client.crt"], pki["client.key"])
    request = urllib.request.Request(f"https://localhost:{port}/metrics")
    if user:
        token = base64.b64encode(f"{user}:{PASSWORD}".encode()).decode()
        request.add_header("Authorization", "Basic " + token)
    return lib.http_get(request, timeout=3, context=context)


def wait_serving(daemon: lib.Managed, probe, deadline: float) -> bool:
    while time.monotonic() < deadline:
        if not daemon.alive():
            return False
        try:
            if probe() == 200:
                return True
        except OSError:
            pass
        time.sleep(0.3)
    return False


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--hucprof", required=True)
    ap.add_argument("--prometheus", default=shutil.which("prometheus") or "/usr/bin/prometheus")
    ap.add_argument("--budget", type=float, default=110.0)
    args = ap.parse_args()

    reasons = []
    if os.geteuid() != 0:
        reasons.append("needs root (the daemons attach BPF programs)")
    for what, path in (("hucprof", args.hucprof), ("prometheus", args.prometheus)):
        if not (os.path.isfile(path) and os.access(path, os.X_OK)):
            reasons.append(f"{what} binary missing at {path}")
    if missing := wf.missing_tools():
        reasons.append("missing " + ", ".join(missing) + " (scripts/install-deps.sh installs them)")
    if (rc := lib.skip_unless_ready("e2e web TLS", reasons)) is not None:
        return rc

    rep = lib.Checklist(show_ok_detail=True)
    workdir = tempfile.mkdtemp(prefix="hucprof-e2e-tls-")
    print(f"work directory: {workdir}", flush=True)
    deadline = time.monotonic() + args.budget
    pki = wf.make_pki(os.path.join(workdir, "pki"))
    users = {"prometheus": wf.bcrypt("prometheus", PASSWORD)}
    configs = {
        "basic": wf.web_config(pki["server.crt"], pki["server.key"], users=users),
        "mtls": wf.web_config(pki["server.crt"], pki["server.key"], client_auth="RequireAndVerifyClientCert",
                              client_ca=pki["ca.crt"]),
    }
    daemons = {}
    for index, (name, text) in enumerate(configs.items()):
        path = os.path.join(workdir, f"web-{name}.yml")
        with open(path, "w") as f:
            f.write(text)
        daemons[name] = lib.HucprofInstance(args.hucprof, index, workdir,
                                            ["--mode", "sample", "--interval", "1s",
                                             "--web.config.file", path])
    prom = None
    try:
        for daemon in daemons.values():
            daemon.start()
        a, b = daemons["basic"], daemons["mtls"]
        rep.check(wait_serving(a, lambda: scrape(a.port, pki, user="prometheus")[0], deadline),
                  "daemon A serves /metrics over TLS with basic auth", a.log_tail())
        rep.check(wait_serving(b, lambda: scrape(b.port, pki, client_cert=True)[0], deadline),
                  "daemon B serves /metrics over mutual TLS", b.log_tail())

        password_file = os.path.join(workdir, "password")
        with open(password_file, "w") as f:
            f.write(PASSWORD)
        tls = {"ca_file": pki["ca.crt"], "server_name": "localhost"}
        mtls = dict(tls, cert_file=pki["client.crt"], key_file=pki["client.key"])
        auth = {"username": "prometheus", "password_file": password_file}
        jobs = {
            "tls-basic-auth": ({"scheme": "https", "tls_config": tls, "basic_auth": auth}, a.port, "up"),
            "wrong-password": ({"scheme": "https", "tls_config": tls,
                                "basic_auth": {"username": "prometheus", "password": "wrong"}}, a.port, "down"),
            "no-credentials": ({"scheme": "https", "tls_config": tls}, a.port, "down"),
            "plain-http": ({"scheme": "http", "basic_auth": auth}, a.port, "down"),
            "mtls": ({"scheme": "https", "tls_config": mtls}, b.port, "up"),
            "mtls-no-client-cert": ({"scheme": "https", "tls_config": tls}, b.port, "down"),
        }
        config = {
            "global": {"scrape_interval": "1s", "scrape_timeout": "1s"},
            "scrape_configs": [dict(job_name=name, static_configs=[{"targets": [f"127.0.0.1:{port}"]}], **extra)
                               for name, (extra, port, _) in jobs.items()],
        }
        prom = lib.PrometheusServer(args.prometheus, workdir, json.dumps(config, indent=2) + "\n")
        prom.start()
        rep.check(prom.wait_ready(deadline), "Prometheus is ready", prom.log_tail())

        # Every target scraped a few times, then judged.
        health = {}
        judge_by = min(deadline, time.monotonic() + 30)
        while time.monotonic() < judge_by:
            targets = prom.api("/api/v1/targets")["activeTargets"]
            health = {t["labels"]["job"]: (t["health"], t.get("lastError", "")) for t in targets}
            if len(health) == len(jobs) and all(h != "unknown" for h, _ in health.values()):
                if health.get("tls-basic-auth", ("",))[0] == "up" and health.get("mtls", ("",))[0] == "up":
                    break
            time.sleep(1)
        time.sleep(3)  # a few more scrapes, so an up target that flaps would show
        targets = prom.api("/api/v1/targets")["activeTargets"]
        health = {t["labels"]["job"]: (t["health"], t.get("lastError", "")) for t in targets}
        for name, (_, _, expected) in jobs.items():
            state, error = health.get(name, ("missing", ""))
            rep.check(state == expected, f"job {name}: target {expected}", f"health {state}, lastError: {error}")
        for name, word in (("wrong-password", "401"), ("no-credentials", "401")):
            rep.check(word in health.get(name, ("", ""))[1], f"job {name}: Prometheus saw {word}",
                      health.get(name, ("", ""))[1])
        rep.check(health.get("plain-http", ("", ""))[1] != "", "job plain-http: a scrape error, no metrics",
                  str(health.get("plain-http")))
        for job in ("tls-basic-auth", "mtls"):
            result = prom.query(f'usercopy_sampled_cpu_samples_total{{job="{job}",context="kernel"}}')
            rep.check(len(result) == 1, f"job {job}: hucprof's samples are in Prometheus",
                      json.dumps(result)[:300])
        result = prom.query('count(up{job=~"wrong-password|no-credentials|plain-http|mtls-no-client-cert"} == 0)')
        rep.check(result and result[0]["value"][1] == "4", "the four refused jobs have up == 0", json.dumps(result)[:300])
    except BaseException as e:  # noqa: BLE001 - report, then always clean up below
        import traceback
        traceback.print_exc()
        rep.fail("e2e web TLS harness", f"unexpected {type(e).__name__}: {e}")
    finally:
        if prom:
            prom.stop()
        for name, daemon in daemons.items():
            rc, clean = daemon.stop()
            rep.check(rc == 0 and clean, f"daemon {name} exits 0 on SIGTERM", daemon.log_tail(10),
                      detail_on_ok=False)
    if not rep.failed:
        shutil.rmtree(workdir, ignore_errors=True)
    return rep.finish()


if __name__ == "__main__":
    sys.exit(main())
