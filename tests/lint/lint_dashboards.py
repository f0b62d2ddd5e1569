#!/usr/bin/env python3
"""Lint of hucprof's Grafana dashboards and Prometheus rules (no root, no network, stdlib only).

Fails on:
  - a dashboard that is not valid JSON, lacks a stable uid (hucprof-<name>, unique) or title;
  - duplicate panel ids within a dashboard (rows' nested panels included);
  - a hard-coded data source: every data source reference must be the ${datasource} variable
    (no uid of somebody's Grafana, no __inputs / ${DS_...} export placeholders);
  - missing `datasource` (type datasource) or `instance` template variables;
  - a hard-coded instance or job in any query (matchers must use $instance / $job), or a panel
    query that ignores $instance (it would show the whole fleet whatever the user selects);
  - a metric used by a panel, template variable or rule that is not in the metric contract
    (tests/lint/metric_contract.txt) nor a recording rule of deploy/prometheus/hucprof.rules.yml;
  - a panel wider than the 24-column grid or without targets' data source.

Usage: lint_dashboards.py [--dashboards DIR] [--rules FILE] [--contract FILE]
Prints one line per problem and a closing 'N passed, N failed' line.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import sys

sys.dont_write_bytecode = True  # no __pycache__ in the source tree
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import promql_sources as ps  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.normpath(os.path.join(HERE, "..", ".."))
ALLOWED_DS_UIDS = {"${datasource}", "$datasource"}
UID_RE = re.compile(r"^hucprof-[a-z0-9-]+$")


def walk_datasources(node, path="$"):
    """Yield (json-path, value) of every 'datasource' key anywhere in the document."""
    if isinstance(node, dict):
        for k, v in node.items():
            if k == "datasource":
                yield f"{path}.{k}", v
            yield from walk_datasources(v, f"{path}.{k}")
    elif isinstance(node, list):
        for i, v in enumerate(node):
            yield from walk_datasources(v, f"{path}[{i}]")


def lint_dashboard(path: str, known: set[str], contract: dict, problems: list[str]) -> int:
    """Returns the number of checks made; appends problems."""
    checks = 0
    name = os.path.basename(path)
    try:
        dash = ps.load_dashboard(path)
    except (OSError, json.JSONDecodeError) as e:
        problems.append(f"{name}: not valid JSON: {e}")
        return 1
    checks += 1

    uid = dash.get("uid")
    checks += 1
    if not isinstance(uid, str) or not UID_RE.match(uid) or len(uid) > 40:
        problems.append(f"{name}: uid {uid!r} must be a stable 'hucprof-<name>' (<= 40 chars)")
    if not dash.get("title"):
        problems.append(f"{name}: no title")
    if "__inputs" in dash:
        problems.append(f"{name}: has __inputs (an export for sharing): provisioning needs the ${{datasource}} variable instead")
    if dash.get("id") not in (None,):
        problems.append(f"{name}: top-level id {dash.get('id')!r} must be null/absent (Grafana assigns it)")

    # Template variables.
    tvars = {v.name: v for v in ps.template_vars(path, dash)}
    checks += 1
    if tvars.get("datasource") is None or tvars["datasource"].type != "datasource" \
            or tvars["datasource"].raw.get("query") != "prometheus":
        problems.append(f"{name}: needs a 'datasource' template variable of type datasource (query prometheus)")
    if "instance" not in tvars:
        problems.append(f"{name}: needs an 'instance' template variable")
    for v in tvars.values():
        if v.type != "query":
            continue
        checks += 1
        parsed = ps.parse_label_values(v.query)
        if parsed is None:
            problems.append(f"{name}: variable ${v.name}: query {v.query!r} is not label_values(...)")
            continue
        selector, _label = parsed
        if selector:
            check_expr(f"{name}: variable ${v.name}", selector, known, contract, problems,
                       require_instance=False)

    # Data sources: only the variable.
    for where, ds in walk_datasources(dash):
        checks += 1
        if isinstance(ds, dict):
            uid_ = ds.get("uid")
            if ds.get("type") == "grafana" or uid_ == "-- Grafana --":
                continue  # the built-in annotation source, not a Prometheus
            if uid_ not in ALLOWED_DS_UIDS:
                problems.append(f"{name}: {where}: data source uid {uid_!r} is hard-coded; use ${{datasource}}")
        elif isinstance(ds, str):
            if ds not in ALLOWED_DS_UIDS and not (where.startswith("$.templating") and ds == "prometheus"):
                problems.append(f"{name}: {where}: data source {ds!r} is hard-coded; use ${{datasource}}")
        elif ds is not None:
            problems.append(f"{name}: {where}: unexpected data source value {ds!r}")
    text = json.dumps(dash)
    if "${DS_" in text:
        problems.append(f"{name}: contains a ${{DS_...}} export placeholder")

    # Panels.
    seen_ids: dict[int, str] = {}
    for p in ps.iter_panels(dash.get("panels", [])):
        checks += 1
        pid = p.get("id")
        title = p.get("title", "")
        if not isinstance(pid, int):
            problems.append(f"{name}: panel '{title}' has no integer id")
        elif pid in seen_ids:
            problems.append(f"{name}: panel id {pid} used by '{seen_ids[pid]}' and '{title}'")
        else:
            seen_ids[pid] = title
        grid = p.get("gridPos") or {}
        if grid.get("x", 0) + grid.get("w", 0) > 24:
            problems.append(f"{name}: panel {pid} '{title}' sticks out of the 24-column grid")
        if p.get("type") != "row" and p.get("targets"):
            if not isinstance(p.get("datasource"), dict):
                problems.append(f"{name}: panel {pid} '{title}' has targets but no datasource")
            if not p.get("description"):
                problems.append(f"{name}: panel {pid} '{title}' has no description (say what it means)")

    for q in ps.panel_queries(path, dash):
        checks += 1
        check_expr(q.where, q.expr, known, contract, problems, require_instance=True)
    return checks


def check_expr(where: str, expr: str, known: set[str], contract: dict, problems: list[str],
               require_instance: bool) -> None:
    try:
        names = ps.metric_names(expr)
    except ValueError as e:
        problems.append(f"{where}: {e}")
        return
    for n in sorted(names):
        if n not in known and ps.resolve_metric(n, contract) is None:
            problems.append(f"{where}: metric {n!r} is not in the metric contract nor a recording rule")
    # Dashboards select with variables; rules may name the scrape job (they cannot use
    # variables) but never a node.
    for label in ("instance", "job") if require_instance else ("instance",):
        for op, value in ps.matcher_values(expr, label):
            if "$" not in value:
                problems.append(f"{where}: hard-coded {label}{op}\"{value}\"; use ${label}")
    if require_instance and "$instance" not in expr and "${instance}" not in expr:
        problems.append(f"{where}: query ignores $instance")


def lint_rules(path: str, known: set[str], contract: dict, problems: list[str]) -> int:
    checks = 0
    try:
        rules = ps.read_rules(path)
    except (OSError, ValueError) as e:
        problems.append(f"{path}: {e}")
        return 1
    if not rules:
        problems.append(f"{path}: no rules found")
    names = set()
    for r in rules:
        checks += 1
        where = f"{os.path.basename(path)}:{r.line} {r.kind} {r.name}"
        if r.name in names and r.kind == "record":
            problems.append(f"{where}: recorded twice")
        names.add(r.name)
        if r.kind == "record" and not re.match(r"^[a-z_]+:[a-z0-9_]+:[a-z0-9_]+$", r.name):
            problems.append(f"{where}: recording rule names follow level:metric:operations")
        if r.kind == "alert" and not re.match(r"^Hucprof[A-Z][A-Za-z]+$", r.name):
            problems.append(f"{where}: alert names are HucprofCamelCase")
        check_expr(where, r.expr, known, contract, problems, require_instance=False)
    return checks


def main(argv: list[str]) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--dashboards", default=os.path.join(REPO, "dashboards"))
    ap.add_argument("--rules", default=os.path.join(REPO, "deploy", "prometheus", "hucprof.rules.yml"))
    ap.add_argument("--contract", default=os.path.join(HERE, "metric_contract.txt"))
    args = ap.parse_args(argv)

    contract = ps.read_contract(args.contract)
    rules = ps.read_rules(args.rules)
    known = set(contract) | {r.name for r in rules if r.kind == "record"}

    problems: list[str] = []
    checks = lint_rules(args.rules, known, contract, problems)
    files = ps.dashboard_files(args.dashboards)
    if not files:
        problems.append(f"{args.dashboards}: no dashboards")
    uids: dict[str, str] = {}
    used: set[str] = set()
    for f in files:
        checks += lint_dashboard(f, known, contract, problems)
        try:
            d = ps.load_dashboard(f)
        except (OSError, json.JSONDecodeError):
            continue
        uid = d.get("uid")
        if uid in uids:
            problems.append(f"{os.path.basename(f)}: uid {uid!r} also used by {uids[uid]}")
        uids[uid] = os.path.basename(f)
        for q in ps.panel_queries(f, d):
            try:
                used |= ps.metric_names(q.expr)
            except ValueError:
                pass
    for r in rules:
        used |= ps.metric_names(r.expr)

    unused = sorted(m for m in contract if contract[m].source not in ("prometheus",)
                    and not any(u == m or ps.resolve_metric(u, contract) == contract[m] for u in used))
    for m in unused:
        print(f"note: contract metric {m} is used by no panel or rule")
    for p in problems:
        print(f"FAIL {p}")
    failed = len(problems)
    print(f"lint: {len(files)} dashboards, {len(rules)} rules, {checks} checks")
    print(f"{max(checks - failed, 0)} passed, {failed} failed")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
