#!/usr/bin/env python3
"""The dashboard lint catches what it promises: run it on fixtures/bad_dashboards (one mistake
of each kind) and on the real dashboards, and check the verdicts. Also unit-checks the PromQL
metric-name extraction the lint and the e2e test rely on."""

import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.dont_write_bytecode = True  # no __pycache__ in the source tree
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(HERE, "..", "lib"))
import lint_dashboards  # noqa: E402
from lint_selftest import Expectations, run_main  # noqa: E402
import promql_sources as ps  # noqa: E402

expect = Expectations()


def run_lint(*args):
    return run_main(lint_dashboards.main, *args)


# 1. metric-name extraction
cases = {
    'sum by (callsite) (rate(usercopy_cpu_samples_total{job="$job",instance=~"$instance"}[$__rate_interval]))':
        {"usercopy_cpu_samples_total"},
    'count(max by (instance) (hucprof_probe_attached{mode=~"fentry|kprobe"}) == 1) or vector(0)':
        {"hucprof_probe_attached"},
    'a:b:c / on (job, instance) group_left x_total offset 5m > 1e3':
        {"a:b:c", "x_total"},
    'histogram_quantile(0.99, sum by (le) (rate(h_bucket[1m])))': {"h_bucket"},
    '{__name__=~"m1|m2",job="$job"}': {"m1", "m2"},
    'sum without (le) (rate(x[5m:1m]))': {"x"},
}
for expr, want in cases.items():
    got = ps.metric_names(expr)
    expect(got == want, f"metric_names({expr!r}) = {sorted(got)}, want {sorted(want)}")

# 2. the rules reader agrees with the file
rules = ps.read_rules(os.path.join(HERE, "..", "..", "deploy", "prometheus", "hucprof.rules.yml"))
expect(any(r.name == "hucprof:usercopy_kernel_cpu_share:ratio_rate5m" and r.kind == "record" for r in rules),
       "rules reader finds hucprof:usercopy_kernel_cpu_share:ratio_rate5m")
expect(all(r.expr.strip() for r in rules), "every rule has an expression")
expect({r.group for r in rules} == {"hucprof.recording", "hucprof.alerts"}, "rule groups read")

# 3. the real dashboards pass
rc, out = run_lint()
expect(rc == 0, "real dashboards pass the lint:\n" + out)

# 4. every planted mistake is reported
rc, out = run_lint("--dashboards", os.path.join(HERE, "fixtures", "bad_dashboards"))
expect(rc == 1, "lint fails on fixtures/bad_dashboards")
for needle in [
    "broken.json: not valid JSON",
    "bad.json: uid 'Health Dashboard'",
    "bad.json: needs an 'instance' template variable",
    "data source uid 'P1809F7CD0C75ACF3' is hard-coded",
    "panel id 2 used by",
    "metric 'usercopy_made_up_total' is not in the metric contract",
    'hard-coded instance="node1:9478"',
    "'Hardened usercopy on' [A]: query ignores $instance",
]:
    expect(needle in out, f"lint reports {needle!r}; output was:\n{out}")

sys.exit(expect.exit_code())
