"""Where hucprof's PromQL lives, and which metrics it names.

Shared by the dashboard lint (tests/lint) and the Prometheus end-to-end test (tests/e2e):
both need every expression of every dashboard panel, template variable and Prometheus rule,
and the metric names each one uses. Python standard library only (no PyYAML): the rules file is
read with a small reader for the subset of YAML it is written in (see read_rules).
"""

from __future__ import annotations

import dataclasses
import json
import os
import re
from typing import Iterator

HISTOGRAM_SUFFIXES = ("_bucket", "_sum", "_count")


# --------------------------------------------------------------------------- metric contract

@dataclasses.dataclass(frozen=True)
class ContractMetric:
    name: str
    type: str    # counter | gauge | histogram
    # probe | probe-latency | sampling | daemon | bpf-stats | debuginfo | process | prometheus
    source: str
    labels: tuple[str, ...]


def read_contract(path: str) -> dict[str, ContractMetric]:
    """metric_contract.txt: `name type source labels` per line, '#' comments."""
    metrics: dict[str, ContractMetric] = {}
    with open(path, encoding="utf-8") as f:
        for lineno, raw in enumerate(f, 1):
            line = raw.split("#", 1)[0].strip()
            if not line:
                continue
            parts = line.split()
            if len(parts) != 4:
                raise ValueError(f"{path}:{lineno}: expected 'name type source labels', got {raw!r}")
            name, mtype, source, labels = parts
            if mtype not in ("counter", "gauge", "histogram"):
                raise ValueError(f"{path}:{lineno}: unknown type {mtype!r}")
            if source not in ("probe", "probe-latency", "sampling", "sampling-decided",
                              "collecting", "daemon", "bpf-stats", "debuginfo", "process",
                              "prometheus"):
                raise ValueError(f"{path}:{lineno}: unknown source {source!r}")
            if name in metrics:
                raise ValueError(f"{path}:{lineno}: {name} listed twice")
            metrics[name] = ContractMetric(name, mtype, source,
                                           tuple() if labels == "-" else tuple(labels.split(",")))
    return metrics


def resolve_metric(name: str, contract: dict[str, ContractMetric]) -> ContractMetric | None:
    """The contract entry a series name belongs to (histogram _bucket/_sum/_count included)."""
    if name in contract:
        return contract[name]
    for suffix in HISTOGRAM_SUFFIXES:
        if name.endswith(suffix):
            base = contract.get(name[: -len(suffix)])
            if base is not None and base.type == "histogram":
                return base
    return None


# --------------------------------------------------------------------------- PromQL names

_KEYWORDS = {
    "by", "without", "on", "ignoring", "group_left", "group_right", "bool",
    "and", "or", "unless", "offset", "inf", "nan", "atan2", "start", "end",
}
_STRING = re.compile(r'"(?:[^"\\]|\\.)*"|\'(?:[^\'\\]|\\.)*\'|`[^`]*`')
_NAME_MATCHER = re.compile(r'__name__\s*(=~|=)\s*("(?:[^"\\]|\\.)*")')
_GROUPING = re.compile(r'\b(by|without|on|ignoring|group_left|group_right)\s*\([^()]*\)')
_GRAFANA_VAR = re.compile(r'\$\{[^}]*\}|\$\w+|\[\[\w+\]\]')
_IDENT = re.compile(r'(?<![\w.:$])([a-zA-Z_:][a-zA-Z0-9_:]*)')


def metric_names(expr: str) -> set[str]:
    """Metric names an expression selects (heuristic tokenizer, good for lint-level checks)."""
    names: set[str] = set()
    for _op, quoted in _NAME_MATCHER.findall(expr):
        value = json.loads(quoted) if quoted.startswith('"') else quoted[1:-1]
        for alt in value.split("|"):
            if re.fullmatch(r"[a-zA-Z_:][a-zA-Z0-9_:]*", alt):
                names.add(alt)
            else:
                raise ValueError(f"cannot list metric names of __name__ regex {value!r}")
    text = _STRING.sub('""', expr)
    text = _GRAFANA_VAR.sub("0", text)
    text = re.sub(r"\{[^{}]*\}", " ", text)       # label matchers
    text = re.sub(r"\[[^\[\]]*\]", " ", text)     # ranges and subqueries
    prev = None
    while prev != text:                           # grouping lists, innermost first
        prev = text
        text = _GROUPING.sub(" ", text)
    for match in _IDENT.finditer(text):
        ident = match.group(1)
        rest = text[match.end():].lstrip()
        if rest.startswith("("):                  # function or aggregation
            continue
        if ident.lower() in _KEYWORDS:
            continue
        names.add(ident)
    return names


def matcher_values(expr: str, label: str) -> list[tuple[str, str]]:
    """(operator, value) of every `label op "value"` matcher in expr."""
    pattern = re.compile(r'(?<![\w])' + re.escape(label) + r'\s*(=~|!=|!~|=)\s*"((?:[^"\\]|\\.)*)"')
    return pattern.findall(expr)


# --------------------------------------------------------------------------- dashboards

@dataclasses.dataclass
class PanelQuery:
    dashboard: str      # file name
    uid: str
    panel_id: int | None
    panel_title: str
    ref_id: str
    expr: str
    instant: bool

    @property
    def where(self) -> str:
        return f"{self.dashboard} panel {self.panel_id} '{self.panel_title}' [{self.ref_id}]"


@dataclasses.dataclass
class TemplateVar:
    dashboard: str
    name: str
    type: str
    query: str          # the PromQL-ish query text ("" when not a query variable)
    multi: bool
    include_all: bool
    all_value: str | None
    raw: dict


def iter_panels(panels: list) -> Iterator[dict]:
    """Every panel, including those nested in rows (collapsed rows keep theirs in 'panels')."""
    for p in panels or []:
        yield p
        yield from iter_panels(p.get("panels", []))


def load_dashboard(path: str) -> dict:
    with open(path, encoding="utf-8") as f:
        return json.load(f)


def dashboard_files(directory: str) -> list[str]:
    return sorted(os.path.join(directory, n) for n in os.listdir(directory) if n.endswith(".json"))


def panel_queries(path: str, dash: dict | None = None) -> list[PanelQuery]:
    dash = dash if dash is not None else load_dashboard(path)
    out = []
    for p in iter_panels(dash.get("panels", [])):
        for t in p.get("targets", []) or []:
            expr = t.get("expr")
            if expr is None or t.get("hide"):
                continue
            out.append(PanelQuery(os.path.basename(path), dash.get("uid", ""), p.get("id"),
                                  p.get("title", ""), t.get("refId", "?"), expr,
                                  bool(t.get("instant")) and not t.get("range", False)))
    return out


def template_vars(path: str, dash: dict | None = None) -> list[TemplateVar]:
    dash = dash if dash is not None else load_dashboard(path)
    out = []
    for v in dash.get("templating", {}).get("list", []):
        q = v.get("query", "")
        if isinstance(q, dict):
            q = q.get("query", "")
        out.append(TemplateVar(os.path.basename(path), v.get("name", ""), v.get("type", ""),
                               q if v.get("type") == "query" else "", bool(v.get("multi")),
                               bool(v.get("includeAll")), v.get("allValue"), v))
    return out


_LABEL_VALUES = re.compile(r"^\s*label_values\(\s*(.*?)\s*,\s*([a-zA-Z_]\w*)\s*\)\s*$", re.S)


def parse_label_values(query: str) -> tuple[str | None, str] | None:
    """label_values(selector, label) -> (selector, label); label_values(label) -> (None, label)."""
    m = _LABEL_VALUES.match(query)
    if m:
        return m.group(1), m.group(2)
    m = re.match(r"^\s*label_values\(\s*([a-zA-Z_]\w*)\s*\)\s*$", query)
    if m:
        return None, m.group(1)
    return None


# --------------------------------------------------------------------------- Prometheus rules

@dataclasses.dataclass
class Rule:
    kind: str     # "record" | "alert"
    name: str
    expr: str
    group: str
    line: int


def read_rules(path: str) -> list[Rule]:
    """Rules of a Prometheus rule file written in plain block YAML.

    Understands `- name: group`, `- record: x` / `- alert: x` and `expr:` given inline, quoted,
    or as a `|` / `>` block scalar. That is all hucprof's rule file uses; `promtool check rules`
    (tests/lint) checks the file is what Prometheus reads the same way.
    """
    with open(path, encoding="utf-8") as f:
        lines = f.read().split("\n")
    rules: list[Rule] = []
    group = ""
    current: dict | None = None
    i = 0

    def finish():
        nonlocal current
        if current is not None:
            if "expr" not in current:
                raise ValueError(f"{path}:{current['line']}: rule {current['name']} has no expr")
            rules.append(Rule(current["kind"], current["name"], current["expr"], group, current["line"]))
        current = None

    while i < len(lines):
        line = lines[i]
        stripped = line.strip()
        if not stripped or stripped.startswith("#"):
            i += 1
            continue
        m = re.match(r"^(\s*)-\s+name:\s*(.+?)\s*$", line)
        if m and (current is None or len(m.group(1)) < current["indent"]):
            finish()
            group = _scalar(m.group(2))
            i += 1
            continue
        m = re.match(r"^(\s*)-\s+(record|alert):\s*(.+?)\s*$", line)
        if m:
            finish()
            current = {"kind": m.group(2), "name": _scalar(m.group(3)), "line": i + 1,
                       "indent": len(m.group(1))}
            i += 1
            continue
        m = re.match(r"^(\s*)expr:\s*(.*?)\s*$", line)
        if m and current is not None:
            key_indent = len(m.group(1))
            value = m.group(2)
            if value and value[0] in "|>":
                block = []
                i += 1
                while i < len(lines) and (not lines[i].strip() or
                                          len(lines[i]) - len(lines[i].lstrip()) > key_indent):
                    block.append(lines[i])
                    i += 1
                indent = min((len(b) - len(b.lstrip()) for b in block if b.strip()), default=0)
                text = "\n".join(b[indent:] for b in block).strip("\n")
                current["expr"] = text if value[0] == "|" else " ".join(text.split())
                continue
            current["expr"] = _scalar(value)
        i += 1
    finish()
    return rules


def _scalar(value: str) -> str:
    value = value.strip()
    if len(value) >= 2 and value[0] == value[-1] and value[0] in "\"'":
        return json.loads(value) if value[0] == '"' else value[1:-1].replace("''", "'")
    return value.split(" #", 1)[0].strip()
