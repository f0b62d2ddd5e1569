#!/usr/bin/env python3
"""End-to-end: real hucprof daemons, a real Prometheus, every dashboard query and every rule.

  1. a bounded UDP loopback flood (huc_udp_flood) makes the kernel run the usercopy checks;
  2. `promtool check config` / `check rules` pass on the generated config and the shipped rules;
  3. a throw-away Prometheus (temp storage, 1 s scrape and rule evaluation) starts scraping the
     daemons' free loopback ports before they listen;
  4. THREE `hucprof run --mode sample --interval 1s --sample-frequency 299` instances (plus one
     in --mode auto, which on a kernel that refuses probes shows the degrade path) start and
     serve /metrics (with the shipped deploy/hucprof.yaml as --config: it must parse; flags win
     over it);
  5. after ~45 s every PromQL expression of every dashboard panel (template variables resolved
     the way Grafana would, through the label-values API) and every recording rule is evaluated
     through /api/v1/query. Any that returns no data FAILS, listed by dashboard/panel/rule —
     except expressions over probe-mode metrics when no probe is attached (this kernel cannot
     probe): those are printed as SKIP with the reason, never silently passed;
  6. the alert rules are loaded and evaluated without error (/api/v1/rules);
  7. contract checks on /metrics: the seed call site udp_recvmsg is attributed, call-site
     cardinality stays within top-k + "other", no raw kernel address in any label, every
     non-probe metric of tests/lint/metric_contract.txt is exported;
  8. one number from node to fleet: each headline panel of the fleet dashboard (the share of busy
     CPU and the ends of its 95 % interval) and the share alert's operand, evaluated by
     Prometheus per node, against the daemon's own gauges scraped at the same instant, over the
     same window (both since the daemon started: shorter than its 5 m --prediction.window and the
     rules' 5 m). Tolerance: the share inside the daemon's 95 % interval, each end within a
     quarter of that interval's width (the windows differ by the second before the first scrape:
     Prometheus runs before the daemons start;
     both intervals take the design effect the daemon measured from its drains, which a loaded
     machine's uneven drains raise to well above the least, 1.5);
  9. every daemon exits 0 on SIGTERM.

Needs root (bpf + perf_event_open); exits 77 (ctest "skipped") with the reason when not root or
when the hucprof / flood / prometheus binaries are missing. Bounded: < 3 minutes.
Closing line: 'N passed, N failed, N skipped'.
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
REPO_DEFAULT = os.path.normpath(os.path.join(HERE, "..", ".."))
sys.dont_write_bytecode = True  # no __pycache__ in the source tree
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(REPO_DEFAULT, "tests", "lint"))
import e2e_lib as lib  # noqa: E402
import promql_sources as ps  # noqa: E402

TOP_K = 20


def series_summary(result: list, limit: int = 3) -> str:
    parts = []
    for item in result[:limit]:
        if isinstance(item, dict):
            labels = {k: v for k, v in item.get("metric", {}).items() if k != "__name__"}
            value = item.get("value", [None, "?"])[1]
            parts.append(f"{labels or '{}'}={value}")
        else:
            parts.append(str(item))
    more = f" +{len(result) - limit} more" if len(result) > limit else ""
    return f"{len(result)} series: " + ", ".join(parts) + more


def underlying_metrics(expr: str, records: dict[str, str], seen: set[str] | None = None) -> set[str]:
    """Metric names of expr, with recording-rule names replaced by what they are computed from."""
    seen = seen or set()
    out = set()
    for name in ps.metric_names(expr):
        if name in records and name not in seen:
            seen.add(name)
            out |= underlying_metrics(records[name], records, seen)
        else:
            out.add(name)
    return out


class ProbeGate:
    """Decides whether an expression can have data on this machine, and why not."""

    def __init__(self, contract, records, modes: list[str], probes_attached: bool, latency_on: bool):
        self.contract, self.records = contract, records
        self.modes, self.probes_attached, self.latency_on = set(modes), probes_attached, latency_on

    def skip_reason(self, expr: str) -> str | None:
        sources = set()
        for name in underlying_metrics(expr, self.records):
            m = ps.resolve_metric(name, self.contract)
            if m is not None:
                sources.add(m.source)
        if sources & {"probe", "probe-latency"} and not self.probes_attached:
            if self.modes == {"sample"}:
                return "probe-mode metric; every instance runs --mode sample"
            return ("probe-mode metric; this kernel cannot probe (no instance, --mode auto included, "
                    "attached a fentry or kprobe probe)")
        if "probe-latency" in sources and not self.latency_on:
            return "latency metric; needs probe mode with --latency"
        return None


def resolve_variables(prom: lib.PrometheusServer, path: str, rep: lib.Checklist) -> dict[str, str] | None:
    """Template variables -> values, the way Grafana fills them on first load."""
    values = dict(lib.GRAFANA_BUILTINS)
    name = os.path.basename(path)
    for var in ps.template_vars(path):
        if var.type == "datasource":
            continue
        if var.type != "query":
            values[var.name] = str(var.raw.get("current", {}).get("value", ""))
            continue
        parsed = ps.parse_label_values(var.query)
        if parsed is None:
            rep.fail(f"{name} variable ${var.name}", f"unsupported query {var.query!r}")
            return None
        selector, label = parsed
        selector = lib.substitute_grafana(selector, values) if selector else None
        try:
            options = prom.label_values(label, selector)
        except RuntimeError as e:
            rep.fail(f"{name} variable ${var.name}", str(e))
            return None
        if not rep.check(bool(options), f"{name} variable ${var.name} has values",
                         f"{label} values of {selector}: {options[:6]}" if options else f"query {var.query!r}"):
            return None
        if var.include_all:
            values[var.name] = var.all_value or "(" + "|".join(re.escape(o) for o in options) + ")"
        else:
            values[var.name] = options[0]
    return values


def main() -> int:
    ap = argparse.ArgumentParser(description="hucprof + Prometheus end-to-end test")
    ap.add_argument("--hucprof", required=True, help="path of the hucprof binary")
    ap.add_argument("--flood", required=True, help="path of huc_udp_flood")
    ap.add_argument("--repo", default=REPO_DEFAULT)
    ap.add_argument("--prometheus", default=shutil.which("prometheus") or "/usr/bin/prometheus")
    ap.add_argument("--promtool", default=shutil.which("promtool") or "/usr/bin/promtool")
    ap.add_argument("--instances", type=int, default=3)
    ap.add_argument("--mode", default="sample", choices=["sample", "auto", "probe"])
    ap.add_argument("--auto-instances", type=int, default=1,
                    help="extra instances in --mode auto: on a kernel that refuses probes they show "
                         "the degrade path (mode=\"none\" targets, hucprof_probe_unavailable_info)")
    ap.add_argument("--warmup", type=float, default=45.0, help="seconds of data before querying")
    ap.add_argument("--keep", action="store_true", help="keep the work directory (logs, TSDB)")
    ap.add_argument("--budget", type=float, default=170.0, help="hard limit on the whole run, seconds")
    args = ap.parse_args()

    # ---- preconditions: skip (77) with a reason, never a silent pass
    reasons = []
    if os.geteuid() != 0:
        reasons.append("needs root (bpf(2) and system-wide perf_event_open(2))")
    for what, path in (("hucprof", args.hucprof), ("huc_udp_flood", args.flood),
                       ("prometheus", args.prometheus), ("promtool", args.promtool)):
        if not (os.path.isfile(path) and os.access(path, os.X_OK)):
            reasons.append(f"{what} binary missing at {path}")
    if (rc := lib.skip_unless_ready("e2e", reasons)) is not None:
        return rc

    repo = os.path.abspath(args.repo)
    rules_file = os.path.join(repo, "deploy", "prometheus", "hucprof.rules.yml")
    shipped_config = os.path.join(repo, "deploy", "hucprof.yaml")
    dashboards = ps.dashboard_files(os.path.join(repo, "dashboards"))
    contract = ps.read_contract(os.path.join(repo, "tests", "lint", "metric_contract.txt"))
    rules = ps.read_rules(rules_file)
    records = {r.name: r.expr for r in rules if r.kind == "record"}

    rep = lib.Checklist(show_ok_detail=True)
    workdir = tempfile.mkdtemp(prefix="hucprof-e2e-")
    print(f"work directory: {workdir}", flush=True)
    t0 = time.monotonic()
    flood = lib.Flood(args.flood, seconds=int(args.warmup) + 120, workdir=workdir)
    modes = [args.mode] * args.instances + ["auto"] * args.auto_instances
    daemons = [lib.HucprofInstance(args.hucprof, i, workdir,
                                   ["--mode", mode, "--interval", "1s", "--sample-frequency", "299"],
                                   config=shipped_config)
               for i, mode in enumerate(modes)]
    state = {"prom": None}

    # Hard bound on the whole run, and SIGTERM (e.g. from a test runner) -> clean up children too.
    def on_signal(signum, _frame):
        raise TimeoutError(f"signal {signum}: run exceeded {args.budget:.0f} s or was stopped")
    signal.signal(signal.SIGALRM, on_signal)
    signal.signal(signal.SIGTERM, on_signal)
    signal.alarm(int(args.budget))
    try:
        run_checks(args, rep, repo, rules_file, dashboards, contract, rules, records, workdir, t0,
                   flood, daemons, state)
    except BaseException as e:  # noqa: BLE001 - report, then always clean up below
        import traceback
        traceback.print_exc()
        rep.fail("e2e harness", f"unexpected {type(e).__name__}: {e}")
    finally:
        signal.alarm(0)
    return finish(rep, workdir, args.keep, daemons, flood, state["prom"])


def run_checks(args, rep, repo, rules_file, dashboards, contract, rules, records, workdir, t0,
               flood, daemons, state) -> None:
    flood.start()
    # ---- Prometheus config + rules through promtool
    config_text = lib.prometheus_config([d.address for d in daemons], [rules_file])
    prom = state["prom"] = lib.PrometheusServer(args.prometheus, workdir, config_text)
    r = subprocess.run([args.promtool, "check", "config", prom.config_path], capture_output=True, text=True, timeout=60)
    rep.check(r.returncode == 0, "promtool check config (generated, with the shipped rules)", (r.stdout + r.stderr).strip()[-500:], detail_on_ok=False)
    r = subprocess.run([args.promtool, "check", "rules", rules_file], capture_output=True, text=True, timeout=60)
    rep.check(r.returncode == 0, "promtool check rules deploy/prometheus/hucprof.rules.yml", (r.stdout + r.stderr).strip()[-500:], detail_on_ok=False)
    prom.start()
    if not rep.check(prom.wait_ready(time.monotonic() + 30), f"prometheus ready on {prom.base}", prom.log_tail()):
        return
    # The daemons start only now, with Prometheus already scraping their addresses every second:
    # the counts a daemon gathers before its first scrape are in its own gauges but not in
    # Prometheus' increase(), so step 8 compares like with like only when that is one scrape.
    for d in daemons:
        d.start()
    for d in daemons:
        if not rep.check(d.wait_serving(time.monotonic() + 45), f"{d.name} ({' '.join(d.cmd[2:])}) serves /metrics",
                         "" if d.alive() else f"exited {d.proc.returncode}:\n{d.log_tail()}"):
            return

    # ---- wait for data from every instance
    started = time.monotonic()
    deadline = started + args.warmup + 60
    have = []
    while time.monotonic() < deadline:
        have = prom.query("count by (instance) (usercopy_cpu_samples_total)")
        if len(have) >= len(daemons) and time.monotonic() - started >= args.warmup:
            break
        time.sleep(1)
    rep.check(len(have) >= len(daemons), f"all {len(daemons)} instances report usercopy_cpu_samples_total",
              f"after {time.monotonic() - started:.0f} s: {series_summary(have)}")
    for d in daemons:
        if not d.alive():
            rep.fail(f"{d.name} still running", f"exited {d.proc.returncode}:\n{d.log_tail()}")

    probes_attached = bool(prom.query('hucprof_probe_attached{mode=~"fentry|kprobe"} == 1'))
    latency_on = bool(prom.query("usercopy_check_duration_seconds_count"))
    gate = ProbeGate(contract, records, [a for d in daemons for a in d.cmd[d.cmd.index("--mode") + 1:][:1]],
                     probes_attached, latency_on)
    print(f"probes attached: {probes_attached}; latency histograms: {latency_on}", flush=True)

    # ---- every dashboard panel query
    for path in dashboards:
        values = resolve_variables(prom, path, rep)
        if values is None:
            continue
        for q in ps.panel_queries(path):
            expr = lib.substitute_grafana(q.expr, values)
            what = f"{q.where}"
            reason = gate.skip_reason(q.expr)
            try:
                result = prom.query(expr)
            except RuntimeError as e:
                rep.fail(what, f"query error: {e}\n       {expr}")
                continue
            if reason and not result:
                rep.skip(what, reason)
            elif result:
                rep.ok(what, series_summary(result))
            else:
                rep.fail(what, f"no data: {expr}")

    # ---- every rule
    for rule in rules:
        reason = gate.skip_reason(rule.expr)
        what = f"rule {rule.kind} {rule.name}"
        try:
            result = prom.query(rule.expr)
        except RuntimeError as e:
            rep.fail(what, f"query error: {e}")
            continue
        if rule.kind == "alert":
            # Alerts need no data (firing is not expected); that they load and evaluate is
            # checked through /api/v1/rules below.
            print(f"info {what}: expression returns {len(result)} series (alerting when non-empty for its 'for:')")
            continue
        if reason and not result:
            rep.skip(what, reason)
        elif result:
            rep.ok(what, series_summary(result))
            recorded = prom.query(rule.name)
            rep.check(bool(recorded), f"recorded series {rule.name} exists", series_summary(recorded))
        else:
            rep.fail(what, f"no data: {rule.expr}")

    # ---- rules loaded and evaluated by the server
    loaded = {}
    for g in prom.rules():
        for r_ in g.get("rules", []):
            loaded[r_["name"]] = r_
    for rule in rules:
        got = loaded.get(rule.name)
        if not rep.check(got is not None, f"/api/v1/rules lists {rule.kind} {rule.name}"):
            continue
        rep.check(got.get("health") != "err" and not got.get("lastError"),
                  f"{rule.kind} {rule.name} evaluates without error", got.get("lastError", ""))

    # ---- contract checks on the exposition itself
    addr_re = re.compile(r'\b(0x)?ffff[0-9a-f]{12}\b')
    exposed = set()
    for d in daemons:
        samples = lib.parse_metrics(d.metrics() or "")
        callsites = {labels["callsite"] for labels, _ in lib.select(samples, "usercopy_cpu_samples_total")
                     if "callsite" in labels}
        rep.check(len(callsites) <= TOP_K + 1, f"{d.name}: call sites bounded by top-k {TOP_K} + other",
                  f"{len(callsites)} call sites")
        leaks = [f'{name}{{{key}="{value}"}}' for name, labels, _ in samples
                 for key, value in labels.items() if addr_re.search(value)]
        rep.check(not leaks, f"{d.name}: no raw kernel address in any label", " ".join(leaks[:3]))
        # A histogram's or summary's series count as its family's name.
        exposed |= {re.sub(r"_(bucket|sum|count)$", "", name) for name, _, _ in samples}
    for name, m in sorted(contract.items()):
        if m.source in ("daemon", "process", "sampling", "sampling-decided"):
            rep.check(name in exposed, f"contract metric {name} is exported ({m.source})")
        elif m.source in ("probe", "probe-latency") and name not in exposed:
            reason = gate.skip_reason(name)
            if reason:
                rep.skip(f"contract metric {name} is exported", reason)
            else:
                rep.fail(f"contract metric {name} is exported", "probes are attached but it is missing")
    seed = prom.query('sum by (instance, syscall) (usercopy_cpu_samples_total{callsite="udp_recvmsg"})')
    rep.check(len({s["metric"].get("instance") for s in seed}) == len(daemons),
              'seed call site callsite="udp_recvmsg" attributed on every instance', series_summary(seed, 6))
    share = prom.query("hucprof_instance:usercopy_kernel_cpu_share:ratio_rate5m")
    if share:
        print("info usercopy share of kernel CPU per instance (secondary): " +
              ", ".join(f"{s['metric'].get('instance')}={float(s['value'][1]):.2%}" for s in share))
    check_prediction_against_prometheus(prom, rep, len(daemons))
    check_headlines_against_daemons(prom, rep, repo, rules, len(daemons))
    print(f"queries done after {time.monotonic() - t0:.0f} s", flush=True)


def check_prediction_against_prometheus(prom: lib.PrometheusServer, rep: lib.Checklist,
                                        instances: int) -> None:
    """The daemon's own speed-up prediction against Prometheus computing it from the scraped
    counters (the recording rule): the same samples, two windowing implementations. Windows do
    not start at the same instant, so the gains (speed-up - 1) may differ by 40 % + 0.002."""
    daemon = {s["metric"].get("instance"): float(s["value"][1]) for s in
              prom.query('usercopy_checks_off_speedup_ratio{estimator="sampling"}')}
    rule = {s["metric"].get("instance"): float(s["value"][1]) for s in
            prom.query("hucprof_instance:usercopy_checks_off_speedup:ratio_rate5m")}
    rep.check(len(daemon) == instances and daemon.keys() == rule.keys(),
              "usercopy_checks_off_speedup_ratio and its recording rule exist for every instance",
              f"daemon {sorted(daemon)}, rule {sorted(rule)}")
    for instance in sorted(daemon.keys() & rule.keys()):
        gain_d, gain_r = daemon[instance] - 1, rule[instance] - 1
        rep.check(abs(gain_d - gain_r) <= 0.4 * gain_r + 0.002,
                  f"{instance}: daemon's predicted speed-up agrees with Prometheus' from the counters",
                  f"daemon {daemon[instance]:.4f}, recording rule {rule[instance]:.4f}", detail_on_ok=True)


# The fleet dashboard's headline panels: refId -> the daemon's gauge it must equal.
HEADLINE_PANELS = {
    ("hucprof-fleet.json", 2): {"A": "usercopy_checks_busy_cpu_ratio",
                                "B": "usercopy_checks_busy_cpu_lower_ratio",
                                "C": "usercopy_checks_busy_cpu_upper_ratio"},
    ("hucprof-fleet.json", 6): {"A": "usercopy_checks_busy_cpu_ratio",
                                "B": "usercopy_checks_busy_cpu_lower_ratio",
                                "C": "usercopy_checks_busy_cpu_upper_ratio"},
}
# Alerts on the share: the gauge their operand (the expression left of the threshold) must equal.
HEADLINE_ALERTS = {"HucprofUsercopyCpuShareHigh": "usercopy_checks_busy_cpu_lower_ratio"}


def by_instance(result: list) -> dict[str, float]:
    return {s["metric"].get("instance"): float(s["value"][1]) for s in result}


def check_headlines_against_daemons(prom: lib.PrometheusServer, rep: lib.Checklist, repo: str,
                                    rules, instances: int) -> None:
    """Every headline query and share alert, per node, against the daemon's own gauges at the
    same evaluation instant (module docstring, step 8)."""
    daemon = {name: by_instance(prom.query(f'{name}{{estimator="sampling"}}'))
              for name in ("usercopy_checks_busy_cpu_ratio", "usercopy_checks_busy_cpu_lower_ratio",
                           "usercopy_checks_busy_cpu_upper_ratio")}
    collecting = by_instance(prom.query('usercopy_prediction_needed_window_seconds{estimator="sampling"}'))
    if not rep.check(len(daemon["usercopy_checks_busy_cpu_ratio"]) == instances,
                     "every daemon's share meets the verdict rule (not collecting)",
                     f"still collecting: {collecting} (needed window seconds)"):
        return
    width = {i: daemon["usercopy_checks_busy_cpu_upper_ratio"][i] - daemon["usercopy_checks_busy_cpu_lower_ratio"][i]
             for i in daemon["usercopy_checks_busy_cpu_ratio"]}

    def compare(what: str, got: dict[str, float], gauge: str) -> None:
        rep.check(set(got) == set(daemon[gauge]), f"{what}: one value per node",
                  f"Prometheus {sorted(got)}, daemons {sorted(daemon[gauge])}")
        for instance in sorted(set(got) & set(daemon[gauge])):
            want = daemon[gauge][instance]
            if gauge == "usercopy_checks_busy_cpu_ratio":
                low = daemon["usercopy_checks_busy_cpu_lower_ratio"][instance]
                high = daemon["usercopy_checks_busy_cpu_upper_ratio"][instance]
                ok = low <= got[instance] <= high
                tolerance = f"inside the daemon's 95 % interval [{low:.4%}, {high:.4%}]"
            else:
                ok = abs(got[instance] - want) <= 0.25 * width[instance]
                tolerance = f"within {0.25 * width[instance]:.4%} (a quarter of the interval)"
            rep.check(ok, f"{what} on {instance} equals the daemon's {gauge}",
                      f"Prometheus {got[instance]:.4%}, daemon {want:.4%}; {tolerance}", detail_on_ok=True)

    dashboards = {os.path.basename(p): p for p in ps.dashboard_files(os.path.join(repo, "dashboards"))}
    for (dashboard, panel_id), refs in HEADLINE_PANELS.items():
        queries = [q for q in ps.panel_queries(dashboards[dashboard]) if q.panel_id == panel_id]
        rep.check({q.ref_id for q in queries} == set(refs), f"{dashboard} panel {panel_id} has its headline queries",
                  f"{sorted(q.ref_id for q in queries)}")
        for q in queries:
            if q.ref_id not in refs:
                continue
            got = {}
            for instance in sorted(daemon["usercopy_checks_busy_cpu_ratio"]):
                # The address as a regex matches itself (and no other node's: the ports differ).
                values = dict(lib.GRAFANA_BUILTINS, job="hucprof", instance=instance)
                got |= {instance: v for v in by_instance(prom.query(lib.substitute_grafana(q.expr, values))).values()}
            compare(q.where, got, refs[q.ref_id])
    for rule in rules:
        if rule.kind != "alert" or rule.name not in HEADLINE_ALERTS:
            continue
        operand = re.match(r"(?s)^(.*?)\s*>\s*[0-9.]+\s*$", rule.expr.strip())
        if not rep.check(operand is not None, f"alert {rule.name} is 'operand > threshold'", rule.expr):
            continue
        compare(f"alert {rule.name}'s operand", by_instance(prom.query(operand.group(1))), HEADLINE_ALERTS[rule.name])


def finish(rep: lib.Checklist, workdir: str, keep: bool, daemons, flood, prom) -> int:
    for d in daemons:
        if d.proc is None:
            continue
        was_alive = d.alive()
        rc, clean = d.stop(timeout=10)
        if was_alive:
            rep.check(rc == 0 and clean, f"{d.name} exits 0 on SIGTERM",
                      f"exit {rc}{'' if clean else ' (needed SIGKILL)'}\n{d.log_tail(10)}", detail_on_ok=False)
    if prom is not None:
        prom.stop()
    flood.stop()
    print(flood.log_tail(2))
    if rep.failed or keep:
        print(f"logs kept in {workdir}")
    else:
        shutil.rmtree(workdir, ignore_errors=True)
    return rep.finish()


if __name__ == "__main__":
    sys.exit(main())
