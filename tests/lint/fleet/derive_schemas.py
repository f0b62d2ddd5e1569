#!/usr/bin/env python3
"""Derive the schemas of Parca's and Grafana Alloy's configuration from their Go sources.

The lint_fleet_configs test checks deploy/parca/parca.yaml and deploy/alloy/hucprof.alloy
against schemas.json, which this script writes from the config structs themselves: every field
with its Go type and its `yaml:` (Parca) or `alloy:` (Alloy) tag, and which struct each Alloy
component takes as its arguments. Re-run it against newer checkouts to follow upstream:

  derive_schemas.py --parca PARCA --alloy ALLOY --prometheus PROMETHEUS [--out schemas.json]

Prometheus' Kubernetes discovery config is derived too: Parca reads `kubernetes_sd_configs`
through it, and Debian's promtool is built without Kubernetes discovery, so cannot check it.

A checkout may also be a bare git directory (then files are read at HEAD with `git show`).
"""

from __future__ import annotations

import argparse
import json
import re
import subprocess
import sys
from pathlib import Path

PARCA_FILES = ["pkg/config/config.go"]
PARCA_STRUCTS = ["Config", "ObjectStorage", "ScrapeConfig", "ProfilingConfig",
                 "PprofProfilingConfig", "SampleType"]
# Component packages, and the structs their arguments are made of (package-qualified).
ALLOY_FILES = {
    "scrape": "internal/component/pyroscope/scrape/scrape.go",
    "write": "internal/component/pyroscope/write/write.go",
    "kubernetes": "internal/component/discovery/kubernetes/kubernetes.go",
    "relabel": "internal/component/discovery/relabel/relabel.go",
    "alloy_relabel": "internal/component/common/relabel/relabel.go",
    "config": "internal/component/common/config/types.go",
    "glue": "internal/component/pyroscope/write/glue/glue.go",
    "discovery": "internal/component/discovery/discovery.go",
}
# How a file imports another of these packages (import alias -> our package key).
ALLOY_IMPORTS = {"component_config": "config", "config": "config", "alloy_relabel": "alloy_relabel",
                 "write": "write", "discovery": "discovery"}

STRUCT_RE = re.compile(r"^type\s+(\w+)\s+struct\s*\{\n(.*?)^\}", re.M | re.S)
MAP_RE = re.compile(r"^type\s+(\w+)\s+(map\[[^\n]+|\[\][^\n]+)$", re.M)
FIELD_RE = re.compile(r"^\s*(\w+)\s+([^`\n]+?)\s*`([^`]*)`")
REGISTER_RE = re.compile(r'component\.Register\(component\.Registration\{.*?Name:\s*"([^"]+)".*?'
                         r"Args:\s*([\w.]+)\{\}(?:,\s*Exports:\s*([\w.]+)\{\})?", re.S)


def read(checkout: Path, path: str) -> tuple[str, str]:
    """(file text, commit) from a work tree or a bare repository."""
    if (checkout / path).is_file():
        text = (checkout / path).read_text()
    else:
        text = subprocess.run(["git", "--git-dir", str(checkout), "show", f"HEAD:{path}"],
                              check=True, capture_output=True, text=True).stdout
    git = ["git", "-C", str(checkout)] if (checkout / ".git").exists() else \
        ["git", "--git-dir", str(checkout)]
    commit = subprocess.run(git + ["rev-parse", "HEAD"], capture_output=True,
                            text=True).stdout.strip()
    return text, commit


def tag_value(tags: str, key: str) -> str | None:
    m = re.search(rf'{key}:"([^"]*)"', tags)
    return m.group(1) if m else None


def structs(text: str, tag: str) -> dict[str, list[dict]]:
    out = {}
    for m in STRUCT_RE.finditer(text):
        fields = []
        for line in m.group(2).splitlines():
            f = FIELD_RE.match(line)
            if not f:
                continue
            value = tag_value(f.group(3), tag)
            if value is None:
                continue
            name, *opts = value.split(",")
            fields.append({"field": f.group(1), "type": f.group(2).strip(), "key": name,
                           "opts": opts})
        out[m.group(1)] = fields
    return out


def named_types(text: str) -> dict[str, str]:
    return {m.group(1): m.group(2).strip() for m in MAP_RE.finditer(text)}


def yaml_structs(checkout: Path, path: str, wanted: list[str]) -> tuple[str, str, dict]:
    """(text, commit, {struct: fields}) of the `yaml:`-tagged structs `wanted` in one file."""
    text, commit = read(checkout, path)
    found = structs(text, "yaml")
    missing = [s for s in wanted if s not in found]
    if missing:
        raise SystemExit(f"{checkout}: structs not found in {path}: {missing}")
    return text, commit, {s: found[s] for s in wanted}


def parca(checkout: Path) -> dict:
    text, commit, found = yaml_structs(checkout, PARCA_FILES[0], PARCA_STRUCTS)
    names = dict(re.findall(r'(pprof\w+)\s+string\s*=\s*"(\w+)"', text))
    # DefaultScrapeConfig: the profiles Parca adds to every job unless the job names them.
    default_body = text[text.index("func DefaultScrapeConfig()"):]
    default_body = default_body[:default_body.index("\n}\n")]
    profiles = {}
    for const, body in re.findall(r"(pprof\w+):\s*&PprofProfilingConfig\{(.*?)\}", default_body, re.S):
        profiles[names[const]] = {"enabled": "trueValue()" in body,
                                  "path": re.search(r'Path:\s*"([^"]+)"', body).group(1),
                                  "delta": bool(re.search(r"Delta:\s*true", body))}
    return {"source": {"repo": "parca-dev/parca", "commit": commit, "files": PARCA_FILES},
            "root": "Config",
            "structs": found,
            "types": {k: v for k, v in named_types(text).items() if k == "PprofConfig"},
            "default_profiles": profiles,
            "default_scrape_interval": duration(default_body, "ScrapeInterval"),
            "default_scrape_timeout": duration(default_body, "ScrapeTimeout")}


def alloy(checkout: Path) -> dict:
    out = {"structs": {}, "types": {}, "components": {}, "commit": ""}
    for pkg, path in ALLOY_FILES.items():
        text, out["commit"] = read(checkout, path)
        for name, fields in structs(text, "alloy").items():
            for f in fields:  # qualify types with our package keys
                f["type"] = qualify(f["type"], pkg)
            out["structs"][f"{pkg}.{name}"] = fields
        for name, value in named_types(text).items():
            out["types"][f"{pkg}.{name}"] = qualify(value, pkg)
        for name, args, exports in REGISTER_RE.findall(text):
            out["components"][name] = {"arguments": qualify(args, pkg),
                                       "exports": qualify(exports, pkg) if exports else None}
    if "pyroscope.scrape" not in out["components"]:
        raise SystemExit("alloy: pyroscope.scrape's registration not found")
    scrape = read(checkout, ALLOY_FILES["scrape"])[0]
    # DefaultProfilingConfig: Go's runtime profiles pyroscope.scrape scrapes unless told not to,
    # keyed by their block names (profile.memory, ...).
    block_of = {f["field"]: f["key"] for f in out["structs"]["scrape.ProfilingConfig"]}
    default_body = scrape[scrape.index("var DefaultProfilingConfig"):]
    default_body = default_body[:default_body.index("\n}\n")]
    profiles = {}
    for field, body in re.findall(r"(\w+):\s*ProfilingTarget\{(.*?)\}", default_body, re.S):
        profiles[block_of[field]] = {
            "enabled": bool(re.search(r"Enabled:\s*true", body)),
            "path": re.search(r'Path:\s*"([^"]+)"', body).group(1),
            "delta": bool(re.search(r"Delta:\s*true", body))}
    args_body = scrape[scrape.index("func NewDefaultArguments()"):]
    args_body = args_body[:args_body.index("\n}\n")]
    actions = re.findall(r'\w+\s+Action\s*=\s*"(\w+)"', read(checkout, ALLOY_FILES["alloy_relabel"])[0])
    return {"source": {"repo": "grafana/alloy", "commit": out["commit"],
                       "files": sorted(ALLOY_FILES.values())},
            "components": out["components"], "structs": out["structs"], "types": out["types"],
            "default_profiles": profiles,
            "default_scrape_interval": duration(args_body, "ScrapeInterval"),
            "default_scrape_timeout": duration(args_body, "ScrapeTimeout"),
            "relabel_actions": actions}


def duration(body: str, field: str) -> float:
    """Seconds of `Field: model.Duration(time.Second * 10)` or `Field: 15 * time.Second`."""
    m = re.search(rf"{field}:\s*(?:model\.Duration\()?(?:time\.Second\s*\*\s*(\d+)|(\d+)\s*\*\s*time\.Second)",
                  body)
    if not m:
        raise SystemExit(f"default {field} not found")
    return float(m.group(1) or m.group(2))


PROMETHEUS_FILES = ["discovery/kubernetes/kubernetes.go"]
PROMETHEUS_STRUCTS = ["SDConfig", "NamespaceDiscovery", "SelectorConfig", "AttachMetadataConfig"]


def prometheus(checkout: Path) -> dict:
    text, commit, found = yaml_structs(checkout, PROMETHEUS_FILES[0], PROMETHEUS_STRUCTS)
    return {"source": {"repo": "prometheus/prometheus", "commit": commit,
                       "files": PROMETHEUS_FILES},
            "kubernetes_sd": found,
            "kubernetes_roles": re.findall(r'Role\w*\s+Role\s*=\s*"(\w+)"', text)}


def qualify(gotype: str, pkg: str) -> str:
    """`[]*Config` in package p -> `[]*p.Config`; `alloy_relabel.Rules` -> `alloy_relabel.Rules`."""
    def one(m: re.Match) -> str:
        name = m.group(0)
        if "." in name:
            alias, rest = name.split(".", 1)
            return f"{ALLOY_IMPORTS[alias]}.{rest}" if alias in ALLOY_IMPORTS else name
        if name[0].isupper():
            return f"{pkg}.{name}"
        return name
    return re.sub(r"[A-Za-z_][\w]*(?:\.[A-Za-z_]\w*)?", one, gotype)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--parca", type=Path, required=True)
    ap.add_argument("--alloy", type=Path, required=True)
    ap.add_argument("--prometheus", type=Path, required=True)
    ap.add_argument("--out", type=Path, default=Path(__file__).with_name("schemas.json"))
    args = ap.parse_args()
    schemas = {"parca": parca(args.parca), "alloy": alloy(args.alloy),
               "prometheus": prometheus(args.prometheus)}
    args.out.write_text(json.dumps(schemas, indent=1, sort_keys=True) + "\n")
    print(f"wrote {args.out}: " + ", ".join(f"{k} {v['source']['commit'][:12]}"
                                            for k, v in schemas.items()))
    return 0


if __name__ == "__main__":
    sys.exit(main())
