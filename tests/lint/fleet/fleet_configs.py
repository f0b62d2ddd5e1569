"""Parca's and Grafana Alloy's view of hucprof's fleet configs (deploy/parca, deploy/alloy).

check_parca / check_alloy read a config, check it against schemas.json (derived from the
scrapers' own config structs by derive_schemas.py) the way each scraper's loader would, and
return the HTTP requests that scraper will send to every hucprof target: path, query, timeout.
Where a rule is the scraper's code rather than its struct, the source line is named.

The requests are what host_fleet_scrapers replays against a real daemon; expect_usercopy_only
holds them against what hucprof serves.
"""

from __future__ import annotations

import dataclasses
import json
import re
import shutil
import subprocess
import tempfile
from pathlib import Path

import yaml

import alloy_syntax

SCHEMAS = json.loads(Path(__file__).with_name("schemas.json").read_text())
HUCPROF_PROFILE_PATH = "/debug/pprof/usercopy"
HUCPROF_MAX_SECONDS = 600  # export/views/pprof_handler.h PprofHandlerLimits::max_seconds
# What a ?seconds=N request needs beyond N: two drains and the encoding (docs/profiles.md, "What a profile holds").
MIN_TIMEOUT_MARGIN_S = 2.0


class ConfigError(ValueError):
    pass


@dataclasses.dataclass
class ScrapeRequest:
    scraper: str         # "parca" | "alloy"
    job: str
    profile: str         # the scraper's profile name ("usercopy", "memory", ...)
    path: str
    query: dict          # name -> [values], as the URL will carry them
    timeout_s: float
    interval_s: float

    @property
    def target(self) -> str:
        from urllib.parse import urlencode
        q = urlencode([(k, v) for k, vs in sorted(self.query.items()) for v in vs])
        return self.path + ("?" + q if q else "")


GO_DURATION = re.compile(r"^(?:\d+(?:\.\d+)?(?:ns|us|µs|ms|s|m|h))+$")
PROM_DURATION = re.compile(r"^(?:\d+(?:y|w|d|h|m|s|ms))+$")


def go_seconds(text: str) -> float:
    if not isinstance(text, str) or not GO_DURATION.match(text):
        raise ConfigError(f"{text!r} is not a duration")
    units = {"ns": 1e-9, "us": 1e-6, "µs": 1e-6, "ms": 1e-3, "s": 1, "m": 60, "h": 3600}
    return sum(float(n) * units[u] for n, u in re.findall(r"(\d+(?:\.\d+)?)(ns|us|µs|ms|s|m|h)", text))


def prom_seconds(text) -> float:
    if not isinstance(text, str) or not PROM_DURATION.match(text):
        raise ConfigError(f"{text!r} is not a Prometheus duration")
    units = {"ms": 1e-3, "s": 1, "m": 60, "h": 3600, "d": 86400, "w": 604800, "y": 31536000}
    return sum(float(n) * units[u] for n, u in re.findall(r"(\d+)(ms|s|m|h|d|w|y)", text))


# --------------------------------------------------------------------------------------------
# Parca (pkg/config/config.go)
# --------------------------------------------------------------------------------------------

def _parca_fields(struct: str) -> dict:
    return {f["key"]: f for f in SCHEMAS["parca"]["structs"][struct] if f["key"] not in ("", "-")}


def _check_parca_struct(value, struct: str, where: str) -> None:
    """yaml.v3 with KnownFields(true): a key the struct does not have is an error. A struct
    with Prometheus' types inlined (`yaml:",inline"`, `yaml:"-"` discovery configs) also takes
    their keys, which promtool checks."""
    if not isinstance(value, dict):
        raise ConfigError(f"{where}: expected a mapping ({struct})")
    fields = _parca_fields(struct)
    inlined = any(f["key"] in ("", "-") for f in SCHEMAS["parca"]["structs"][struct])
    inline_ok = PROMETHEUS_INLINE if inlined else ()
    for key, item in value.items():
        if key in fields:
            _check_parca_value(item, fields[key]["type"], f"{where}.{key}")
        elif not any(re.fullmatch(p, key) for p in inline_ok):
            raise ConfigError(f"{where}: field {key} not found in type config.{struct}")


def _check_parca_value(value, gotype: str, where: str) -> None:
    t = gotype.lstrip("*")
    if t == "string":
        ok = isinstance(value, str)
    elif t == "bool":
        ok = isinstance(value, bool)
    elif t == "int":
        ok = isinstance(value, int) and not isinstance(value, bool)
    elif t == "model.Duration":
        prom_seconds(value)
        ok = True
    elif t in SCHEMAS["parca"]["structs"]:
        _check_parca_struct(value, t, where)
        ok = True
    elif t in SCHEMAS["parca"]["types"]:  # PprofConfig: map[string]*PprofProfilingConfig
        if not isinstance(value, dict):
            raise ConfigError(f"{where}: expected a mapping of profiles")
        element = SCHEMAS["parca"]["types"][t].split("]", 1)[1]
        for name, item in value.items():
            _check_parca_value(item, element, f"{where}.{name}")
        ok = True
    elif t.startswith("[]"):
        if not isinstance(value, list):
            raise ConfigError(f"{where}: expected a list")
        for i, item in enumerate(value):
            _check_parca_value(item, t[2:], f"{where}[{i}]")
        ok = True
    else:  # other packages' types (url.Values, relabel.Config, client.BucketConfig): promtool
        ok = True
    if not ok:
        raise ConfigError(f"{where}: {value!r} is not a {t}")


# Keys of a scrape config that Parca reads through Prometheus' own types: the inline HTTP client
# config (prometheus/common) and every `*_sd_configs` (discovery.UnmarshalYAMLWithInlineConfigs).
PROMETHEUS_INLINE = (r"\w+_sd_configs", r"static_configs", r"basic_auth", r"authorization",
                     r"oauth2", r"bearer_token", r"bearer_token_file", r"tls_config",
                     r"proxy_url", r"no_proxy", r"proxy_from_environment",
                     r"proxy_connect_header", r"follow_redirects", r"enable_http2",
                     r"http_headers")


def _check_kubernetes_sd(value, where: str) -> None:
    """Prometheus' kubernetes.SDConfig (discovery/kubernetes/kubernetes.go), from schemas.json:
    Debian's promtool is built without Kubernetes discovery."""
    schema = SCHEMAS["prometheus"]
    if not isinstance(value, list):
        raise ConfigError(f"{where}: expected a list")

    def struct(item, name, at):
        if not isinstance(item, dict):
            raise ConfigError(f"{at}: expected a mapping ({name})")
        fields = {f["key"]: f for f in schema["kubernetes_sd"][name] if f["key"]}
        inlined = any(f["key"] == "" for f in schema["kubernetes_sd"][name])
        for key, v in item.items():
            if key not in fields:
                if inlined and any(re.fullmatch(p, key) for p in PROMETHEUS_INLINE[2:]):
                    continue
                raise ConfigError(f"{at}: field {key} not found in type kubernetes.{name}")
            t = fields[key]["type"]
            element = t[2:] if t.startswith("[]") else t
            items = v if t.startswith("[]") else [v]
            if t.startswith("[]") and not isinstance(v, list):
                raise ConfigError(f"{at}.{key}: expected a list")
            for i in items:
                if element in schema["kubernetes_sd"]:
                    struct(i, element, f"{at}.{key}")
                elif element == "Role" and i not in schema["kubernetes_roles"]:
                    raise ConfigError(f"{at}.{key}: unknown Kubernetes SD role {i!r}")
                elif element == "string" and not isinstance(i, str):
                    raise ConfigError(f"{at}.{key}: {i!r} is not a string")
                elif element == "bool" and not isinstance(i, bool):
                    raise ConfigError(f"{at}.{key}: {i!r} is not a bool")
        if name == "SDConfig" and "role" not in item:
            raise ConfigError(f"{at}: role missing (must be one of {schema['kubernetes_roles']})")

    for i, item in enumerate(value):
        struct(item, "SDConfig", f"{where}[{i}]")


def _promtool_check(jobs: list[dict]) -> None:
    """The parts of Parca's scrape configs that are Prometheus' types, through Prometheus (but
    Kubernetes discovery, which Debian's Prometheus lacks: _check_kubernetes_sd)."""
    promtool = shutil.which("promtool")
    if promtool is None:
        raise ConfigError("promtool not installed (Debian's prometheus package)")
    # Not the interval and timeout: Parca wants the timeout above the interval (a profile request
    # waits), Prometheus below; check_parca applies Parca's rule.
    keep = {"job_name", "scheme", "params", "relabel_configs"}
    pjobs = []
    for job in jobs:
        pjob = {k: v for k, v in job.items() if k != "kubernetes_sd_configs" and
                (k in keep or any(re.fullmatch(p, k) for p in PROMETHEUS_INLINE))}
        pjobs.append(pjob)
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "prometheus.yml"
        path.write_text(yaml.safe_dump({"scrape_configs": pjobs}))
        r = subprocess.run([promtool, "check", "config", "--syntax-only", str(path)],
                           capture_output=True, text=True)
        if r.returncode != 0:
            raise ConfigError("Prometheus' types refuse it (promtool check config): "
                              + (r.stdout + r.stderr).strip().splitlines()[-1])


def check_parca(text: str, run_promtool: bool = True) -> list[ScrapeRequest]:
    schema = SCHEMAS["parca"]
    doc = yaml.safe_load(text)
    _check_parca_struct(doc, "Config", "parca.yaml")
    if not doc.get("object_storage", {}).get("bucket"):  # Config.Validate: Required
        raise ConfigError("parca.yaml: object_storage.bucket is required")
    jobs = doc.get("scrape_configs") or []
    requests = []
    for i, job in enumerate(jobs):
        where = f"scrape_configs[{i}]"
        _check_parca_struct(job, "ScrapeConfig", where)
        if "kubernetes_sd_configs" in job:
            _check_kubernetes_sd(job["kubernetes_sd_configs"], f"{where}.kubernetes_sd_configs")
        # ScrapeConfig.UnmarshalYAML
        if not job.get("job_name"):
            raise ConfigError(f"{where}: job_name is empty")
        interval = prom_seconds(job["scrape_interval"]) if "scrape_interval" in job \
            else schema["default_scrape_interval"]
        timeout = prom_seconds(job["scrape_timeout"]) if "scrape_timeout" in job \
            else schema["default_scrape_timeout"]
        if timeout == 0:
            timeout = interval + 3
        if timeout <= interval:
            raise ConfigError(f"{where}: scrape timeout must be greater than the interval")
        profiling = job.get("profiling_config") or {}
        pprof = {name: dict(cfg or {}) for name, cfg in (profiling.get("pprof_config") or {}).items()}
        # The defaults are merged in: a default profile the job does not name is scraped.
        for name, default in schema["default_profiles"].items():
            if name not in pprof:
                pprof[name] = dict(default)
                continue
            pprof[name].setdefault("enabled", True)
            pprof[name].setdefault("path", default["path"])
        prefix = profiling.get("path_prefix", "")
        for name, cfg in sorted(pprof.items()):
            if not cfg.get("enabled", True):
                continue
            path = cfg.get("path", "")
            if prefix:
                path = "/" + "/".join(p for p in (prefix + "/" + path).split("/") if p)
            query = {k: list(v) if isinstance(v, list) else [v]
                     for k, v in (job.get("params") or {}).items()}
            if cfg.get("delta"):
                # pkg/scrape/target.go: seconds is the profile's `seconds`, else the interval.
                # (It is added to the job's params map itself, once per target: with params set,
                # every target after the first sends seconds twice.)
                query.setdefault("seconds", []).append(str(int(cfg.get("seconds") or interval)))
            requests.append(ScrapeRequest("parca", job["job_name"], name, path, query, timeout,
                                          interval))
    if run_promtool:
        _promtool_check(jobs)
    return requests


# --------------------------------------------------------------------------------------------
# Grafana Alloy (internal/component/...)
# --------------------------------------------------------------------------------------------

def _alloy_fields(struct: str) -> list[dict]:
    """A struct's fields with squashed structs flattened in (`alloy:",squash"`)."""
    out = []
    for f in SCHEMAS["alloy"]["structs"].get(struct, []):
        if "squash" in f["opts"]:
            out += _alloy_fields(f["type"].lstrip("*"))
        else:
            out.append(f)
    return out


def _element(gotype: str) -> tuple[str, bool]:
    t = gotype.lstrip("*")
    repeated = t.startswith("[]")
    return (t[2:].lstrip("*") if repeated else t), repeated


def _check_alloy_value(value, gotype: str, where: str) -> None:
    t = gotype.lstrip("*")
    if isinstance(value, (alloy_syntax.Ref, alloy_syntax.Call)):
        return  # evaluated at run time; references are checked by _check_references
    t = SCHEMAS["alloy"]["types"].get(t, t)
    ok = True
    if t in ("string", "config.URL", "alloy_relabel.Regexp", "alloytypes.Secret"):
        ok = isinstance(value, str)
    elif t == "alloy_relabel.Action":
        ok = value in SCHEMAS["alloy"]["relabel_actions"]
    elif t == "bool":
        ok = isinstance(value, bool)
    elif t in ("int", "uint64"):
        ok = isinstance(value, int) and not isinstance(value, bool) and (t == "int" or value >= 0)
    elif t == "time.Duration":
        go_seconds(value)
    elif t.startswith("map[") or t == "url.Values":
        ok = isinstance(value, dict)
    elif t.startswith("[]"):
        ok = isinstance(value, list)
        for i, item in enumerate(value if ok else []):
            _check_alloy_value(item, t[2:], f"{where}[{i}]")
    if not ok:
        raise ConfigError(f"{where}: {value!r} is not a valid {t}")


def _check_alloy_body(block: alloy_syntax.Block, struct: str, where: str) -> None:
    fields = _alloy_fields(struct)
    if not fields and struct not in SCHEMAS["alloy"]["structs"]:
        raise ConfigError(f"{where}: no schema for {struct}")
    attrs = {f["key"]: f for f in fields if "attr" in f["opts"]}
    blocks = {f["key"]: f for f in fields if "block" in f["opts"]}
    labelled = any("label" in f["opts"] for f in fields)
    if labelled and block.label is None:
        raise ConfigError(f"{where}: block {block.name} needs a label")
    if not labelled and block.label is not None and where.count(".") > 0 and "/" in where:
        raise ConfigError(f"{where}: block {block.name} takes no label")
    for name, (value, line) in block.attrs.items():
        if name not in attrs:
            raise ConfigError(f"line {line}: {where}: unrecognized attribute name {name!r}")
        _check_alloy_value(value, attrs[name]["type"], f"line {line}: {where}.{name}")
    seen = {}
    for inner in block.blocks:
        if inner.name not in blocks:
            raise ConfigError(f"line {inner.line}: {where}: unrecognized block name {inner.name!r}")
        element, repeated = _element(blocks[inner.name]["type"])
        seen[inner.name] = seen.get(inner.name, 0) + 1
        if seen[inner.name] > 1 and not repeated:
            raise ConfigError(f"line {inner.line}: {where}: block {inner.name!r} may only be given once")
        _check_alloy_body(inner, element, f"{where}/{inner.name}")
    for name, f in attrs.items():
        if "optional" not in f["opts"] and name not in block.attrs:
            raise ConfigError(f"line {block.line}: {where}: missing required attribute {name!r}")
    for name, f in blocks.items():
        if "optional" not in f["opts"] and name not in seen:
            raise ConfigError(f"line {block.line}: {where}: missing required block {name!r}")


def _check_references(components: dict, value, where: str) -> None:
    if isinstance(value, alloy_syntax.Ref):
        parts = value.path.split(".")
        for n in range(len(parts) - 1, 0, -1):
            name, rest = ".".join(parts[:n]), parts[n:]
            if name in SCHEMAS["alloy"]["components"] and len(rest) == 2:
                label, export = rest
                if (name, label) not in components:
                    raise ConfigError(f"{where}: {value.path}: no component {name} \"{label}\"")
                exports = SCHEMAS["alloy"]["components"][name]["exports"]
                keys = {f["key"] for f in SCHEMAS["alloy"]["structs"].get(exports or "", [])}
                if export not in keys:
                    raise ConfigError(f"{where}: {value.path}: {name} exports no {export}")
                return
        raise ConfigError(f"{where}: {value.path} names no component's export")
    if isinstance(value, list):
        for item in value:
            _check_references(components, item, where)
    if isinstance(value, dict):
        for item in value.values():
            _check_references(components, item, where)


def _walk_attrs(block: alloy_syntax.Block):
    for name, (value, line) in block.attrs.items():
        yield name, value, line
    for inner in block.blocks:
        yield from _walk_attrs(inner)


def check_alloy(text: str) -> list[ScrapeRequest]:
    schema = SCHEMAS["alloy"]
    blocks = alloy_syntax.parse(text)
    components = {}
    for b in blocks:
        if b.name not in schema["components"]:
            raise ConfigError(f"line {b.line}: unknown component {b.name}")
        if b.label is None:
            raise ConfigError(f"line {b.line}: component {b.name} needs a label")
        if (b.name, b.label) in components:
            raise ConfigError(f"line {b.line}: {b.name} \"{b.label}\" declared twice")
        components[(b.name, b.label)] = b
        _check_alloy_body(b, schema["components"][b.name]["arguments"], b.name)
    for b in blocks:
        for name, value, line in _walk_attrs(b):
            _check_references(components, value, f"line {line}: {b.name}.{name}")
    requests = []
    for (name, label), b in components.items():
        if name == "discovery.relabel":
            for rule in b.blocks:  # alloy_relabel.Config.Validate
                action = rule.attrs.get("action", ("replace", 0))[0]
                if action in ("replace", "hashmod", "lowercase", "uppercase") and \
                        "target_label" not in rule.attrs:
                    raise ConfigError(f"line {rule.line}: relabel action {action} requires "
                                      "'target_label'")
        if name != "pyroscope.scrape":
            continue
        interval = go_seconds(b.attrs["scrape_interval"][0]) if "scrape_interval" in b.attrs \
            else schema["default_scrape_interval"]
        timeout = go_seconds(b.attrs["scrape_timeout"][0]) if "scrape_timeout" in b.attrs \
            else schema["default_scrape_timeout"]
        default_delta = schema["default_scrape_interval"] - 1  # defaultProfilingDuration
        delta_duration = go_seconds(b.attrs["delta_profiling_duration"][0]) \
            if "delta_profiling_duration" in b.attrs else default_delta
        profiles = {n: dict(p) for n, p in schema["default_profiles"].items()}
        prefix = ""
        for pc in (x for x in b.blocks if x.name == "profiling_config"):
            prefix = pc.attrs.get("path_prefix", ("", 0))[0]
            for p in pc.blocks:
                key = p.name if p.name != "profile.custom" else f"custom/{p.label}"
                cfg = profiles.setdefault(key, {"enabled": False, "path": "", "delta": False})
                for attr in ("enabled", "path", "delta"):
                    if attr in p.attrs:
                        cfg[attr] = p.attrs[attr][0]
        # Arguments.Validate
        if timeout <= 0:
            raise ConfigError(f"line {b.line}: scrape_timeout must be greater than 0")
        for cfg in profiles.values():
            if cfg["enabled"] and cfg["delta"]:
                if interval < 2:
                    raise ConfigError(f"line {b.line}: scrape_interval must be at least 2 seconds "
                                      "when using delta profiling")
                if delta_duration <= 1 or delta_duration > interval - 1:
                    raise ConfigError(f"line {b.line}: delta_profiling_duration must be between "
                                      "1 s and scrape_interval - 1 s")
        job = b.attrs["job_name"][0] if "job_name" in b.attrs else f"{name}.{label}"
        for key, cfg in sorted(profiles.items()):
            if not cfg["enabled"]:
                continue
            params = b.attrs.get("params", ({}, 0))[0]
            query = {k: list(v) if isinstance(v, list) else [v] for k, v in params.items()}
            request_timeout = timeout
            if cfg["delta"]:
                # target.go targetsFromGroup: interval - 1 s, unless delta_profiling_duration
                # was changed from its default; scrape_loop.go newScrapeLoop: the timeout grows
                # by interval - 1 s for a target with `seconds`.
                seconds = interval - 1 if delta_duration == default_delta else delta_duration
                query.setdefault("seconds", []).append(str(int(seconds)))
            if "seconds" in query:
                request_timeout += interval - 1
            path = "/" + "/".join(x for x in (prefix + "/" + cfg["path"]).split("/") if x)
            requests.append(ScrapeRequest("alloy", job, key.split("/")[-1].removeprefix("profile."),
                                          path, query, request_timeout, interval))
    return requests


def service_names(text: str) -> list[str]:
    """The service_name each pyroscope.scrape target gets from relabel rules of this file."""
    names = []
    for b in alloy_syntax.parse(text):
        if b.name == "discovery.relabel":
            for rule in b.blocks:
                if rule.attrs.get("target_label", (None,))[0] == "service_name":
                    names.append(rule.attrs.get("replacement", ("$1",))[0])
    return names


# --------------------------------------------------------------------------------------------
# What hucprof serves
# --------------------------------------------------------------------------------------------

def expect_usercopy_only(requests: list[ScrapeRequest]) -> list[str]:
    """Problems with these requests as hucprof sees them; [] when every one will succeed."""
    problems = []
    if not requests:
        problems.append("no profile is scraped at all")
    for r in requests:
        tag = f"{r.scraper} job {r.job}, profile {r.profile}"
        if r.path != HUCPROF_PROFILE_PATH:
            problems.append(f"{tag}: GET {r.path}: hucprof serves no such profile (404)")
            continue
        seconds = r.query.get("seconds", [])
        if len(seconds) != 1:
            problems.append(f"{tag}: ?seconds given {len(seconds)} times: without exactly one, "
                            "each scrape is the total since start (or a 400 when given twice)")
            continue
        n = int(seconds[0])
        if not 1 <= n <= HUCPROF_MAX_SECONDS:
            problems.append(f"{tag}: seconds={n} is outside 1..{HUCPROF_MAX_SECONDS} (400)")
        if r.timeout_s < n + MIN_TIMEOUT_MARGIN_S:
            problems.append(f"{tag}: timeout {r.timeout_s:g} s leaves less than "
                            f"{MIN_TIMEOUT_MARGIN_S:g} s after the {n} s window")
        if n > r.interval_s:
            problems.append(f"{tag}: {n} s windows every {r.interval_s:g} s overlap")
        if set(r.query) != {"seconds"}:
            problems.append(f"{tag}: query parameters hucprof does not read: "
                            f"{sorted(set(r.query) - {'seconds'})}")
    return problems
