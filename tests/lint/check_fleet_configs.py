#!/usr/bin/env python3
"""lint_fleet_configs: deploy/parca/parca.yaml and deploy/alloy/hucprof.alloy as Parca and
Grafana Alloy would load them, and the requests they would send to hucprof.

Each file is checked against fleet/schemas.json, derived from the scrapers' Go config structs
(fleet/derive_schemas.py names the upstream commits), plus the rules of their loaders; the
Prometheus types Parca embeds go through Debian's promtool. Then the requests each scraper
derives (path, ?seconds=, timeout) must be ones hucprof answers with a delta profile. Planted
defects show that every rule can fail. host_fleet_scrapers replays the requests for real.

Exit 0 pass, 1 fail, 77 skip (python3-yaml or promtool missing).
"""

from __future__ import annotations

import re
import shutil
import sys
from pathlib import Path

sys.dont_write_bytecode = True
HERE = Path(__file__).resolve().parent
REPO = HERE.parent.parent
sys.path.insert(0, str(HERE / "fleet"))

try:
    import fleet_configs as fc  # noqa: E402  (needs python3-yaml)
except ImportError as e:
    print(f"SKIP: {e} (scripts/install-deps.sh installs python3-yaml)")
    sys.exit(77)

PARCA = REPO / "deploy" / "parca" / "parca.yaml"
ALLOY = REPO / "deploy" / "alloy" / "hucprof.alloy"

failures: list[str] = []


def check(ok: bool, what: str, detail: str = "") -> None:
    print(f"{'ok  ' if ok else 'FAIL'} {what}" + (f": {detail}" if detail and not ok else ""))
    if not ok:
        failures.append(what)


def problems_of(kind: str, text: str) -> list[str]:
    """The loader's error, or what hucprof would answer badly, for a config text."""
    try:
        requests = fc.check_parca(text) if kind == "parca" else fc.check_alloy(text)
    except (fc.ConfigError, fc.alloy_syntax.AlloySyntaxError) as e:
        return [f"refused: {e}"]
    problems = fc.expect_usercopy_only(requests)
    if kind == "alloy" and "hucprof" not in fc.service_names(text):
        problems.append("no service_name")
    return problems


def planted(kind: str, text: str, what: str, old: str, new: str, expect: str) -> None:
    if old not in text:
        check(False, f"{kind}: planted defect '{what}' applies", f"{old!r} not in the file")
        return
    got = problems_of(kind, text.replace(old, new, 1))
    check(any(re.search(expect, p) for p in got), f"{kind}: planted defect caught: {what}",
          f"expected /{expect}/, got {got}")


def main() -> int:
    if shutil.which("promtool") is None:
        print("SKIP: promtool not installed (Debian's prometheus package)")
        return 77
    sources = ", ".join(f"{k} {v['source']['repo']}@{v['source']['commit'][:12]}"
                        for k, v in fc.SCHEMAS.items())
    print(f"schemas from {sources}")
    parca, alloy = PARCA.read_text(), ALLOY.read_text()

    for kind, text, path in (("parca", parca, PARCA), ("alloy", alloy, ALLOY)):
        try:
            requests = fc.check_parca(text) if kind == "parca" else fc.check_alloy(text)
        except (fc.ConfigError, fc.alloy_syntax.AlloySyntaxError) as e:
            check(False, f"{path.relative_to(REPO)} loads", str(e))
            continue
        check(True, f"{path.relative_to(REPO)} loads as {kind} loads it")
        for r in requests:
            print(f"     {kind} sends GET {r.target} every {r.interval_s:g} s, "
                  f"timeout {r.timeout_s:g} s")
        problems = fc.expect_usercopy_only(requests)
        check(not problems, f"{kind}: only delta profiles hucprof serves", "; ".join(problems))
    check("hucprof" in fc.service_names(alloy), "alloy: every target gets service_name=hucprof")

    # Each rule can fail.
    planted("parca", parca, "misspelt key", "scrape_timeout: 15s", "scrape_timout: 15s",
            r"field scrape_timout not found")
    planted("parca", parca, "a Go profile left on", "memory: {enabled: false}", "",
            r"/debug/pprof/allocs")
    planted("parca", parca, "not a delta profile", "delta: true", "delta: false",
            r"seconds given 0 times")
    planted("parca", parca, "params beside seconds", "scrape_timeout: 15s",
            "scrape_timeout: 15s\n    params: {debug: ['1']}", r"does not read")
    planted("parca", parca, "timeout not above the interval", "scrape_timeout: 15s",
            "scrape_timeout: 10s", r"greater than the interval")
    planted("parca", parca.replace("scrape_timeout: 15s", "scrape_timeout: 12m"),
            "window longer than hucprof allows", "scrape_interval: 10s", "scrape_interval: 11m",
            r"seconds=660 is outside 1\.\.600")
    planted("parca", parca, "unknown discovery role", "- role: pod\n        namespaces",
            "- role: pods\n        namespaces", r"unknown Kubernetes SD role")
    planted("parca", parca, "bad relabel action (promtool)", "action: keep", "action: kep",
            r"promtool")
    planted("alloy", alloy, "misspelt attribute", 'scrape_interval = "15s"',
            'scrape_intervall = "15s"', r"unrecognized attribute name 'scrape_intervall'")
    planted("alloy", alloy, "custom profile without its path", 'path    = "/debug/pprof/usercopy"',
            "", r"missing required attribute 'path'")
    planted("alloy", alloy, "custom profile without a name", 'profile.custom "usercopy" {',
            "profile.custom {", r"needs a label")
    planted("alloy", alloy, "a Go profile left on", "profile.process_cpu {\n      enabled = false",
            "profile.process_cpu {\n      enabled = true", r"/debug/pprof/profile")
    planted("alloy", alloy, "not a delta profile", "delta   = true", "delta   = false",
            r"seconds given 0 times")
    planted("alloy", alloy, "delta duration longer than the interval", 'scrape_timeout = "10s"',
            'scrape_timeout = "10s"\n  delta_profiling_duration = "20s"',
            r"delta_profiling_duration must be")
    planted("alloy", alloy, "reference to no component", "pyroscope.write.default.receiver",
            "pyroscope.write.other.receiver", r"no component pyroscope.write \"other\"")
    planted("alloy", alloy, "bad relabel action", 'action        = "keep"',
            'action        = "kep"', r"not a valid alloy_relabel.Action")
    planted("alloy", alloy, "no service_name", 'target_label = "service_name"',
            'target_label = "service"', r"no service_name")
    print(f"{'PASS' if not failures else 'FAIL'}: {len(failures)} failed")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
