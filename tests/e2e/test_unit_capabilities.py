#!/usr/bin/env python3
"""The systemd unit's privileges are enough, and each one is needed.

Reads CapabilityBoundingSet= from deploy/hucprof.service and runs `hucprof run --mode auto` the
way the unit would (an unprivileged uid, no_new_privs, exactly those ambient capabilities,
via setpriv(1)):
  - with all of them it must attach the sampler and serve /metrics with samples;
  - without any single one of them it must exit 1 (the exit code the unit does not restart:
    RestartPreventExitStatus=1), naming the problem — never hang, crash or pretend to work.

Needs root (to drop to the unprivileged uid with chosen capabilities) and setpriv (util-linux);
exits 77 with the reason otherwise. Closing line: 'N passed, N failed'.
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.normpath(os.path.join(HERE, "..", ".."))
sys.dont_write_bytecode = True  # no __pycache__ in the source tree
sys.path.insert(0, HERE)
import e2e_lib as lib  # noqa: E402

NOBODY = 65534


def unit_caps(unit: str) -> list[str]:
    caps = None
    with open(unit, encoding="utf-8") as f:
        for line in f:
            m = re.match(r"^\s*CapabilityBoundingSet=(.*)$", line)
            if m:
                caps = m.group(1).split()
    if not caps:
        raise SystemExit(f"{unit}: no CapabilityBoundingSet=")
    return [c.lower().removeprefix("cap_") for c in caps]


def setpriv_cmd(caps: list[str]) -> list[str]:
    cs = ",".join(["-all"] + [f"+{c}" for c in caps])
    return ["setpriv", f"--reuid={NOBODY}", f"--regid={NOBODY}", "--clear-groups", "--no-new-privs",
            f"--inh-caps={cs}", f"--ambient-caps={cs}", f"--bounding-set={cs}"]


def named_site_sampled(samples: list) -> bool:
    """A CPU sample inside a check at a symbolized call site (not [unknown], not the top-k's
    other)."""
    return any(labels.get("callsite") not in (None, "[unknown]", "other")
               for labels, _ in lib.select(samples, "usercopy_cpu_samples_total"))


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--hucprof", required=True)
    ap.add_argument("--flood", required=True)
    ap.add_argument("--unit", default=os.path.join(REPO, "deploy", "hucprof.service"))
    args = ap.parse_args()
    reasons = []
    if os.geteuid() != 0:
        reasons.append("needs root (to start hucprof as an unprivileged uid with chosen capabilities)")
    if not shutil.which("setpriv"):
        reasons.append("setpriv (util-linux) not installed")
    for what, path in (("hucprof", args.hucprof), ("huc_udp_flood", args.flood)):
        if not os.access(path, os.X_OK):
            reasons.append(f"{what} binary missing at {path}")
    if (rc := lib.skip_unless_ready("unit capabilities", reasons)) is not None:
        return rc

    caps = unit_caps(args.unit)
    print(f"unit capabilities: {' '.join(caps)}")
    checks = lib.Checklist(show_ok_detail=False)
    check = checks.check

    with tempfile.TemporaryDirectory(prefix="hucprof-caps-") as tmp:
        # The build tree may not be searchable by the unprivileged uid: run a copy.
        binary = os.path.join(tmp, "hucprof")
        shutil.copy2(args.hucprof, binary)
        os.chmod(tmp, 0o755)
        os.chmod(binary, 0o755)
        flood = lib.Flood(args.flood, seconds=40, workdir=tmp)
        flood.start()
        try:
            # All of the unit's capabilities: works.
            d = lib.Managed("hucprof", [], os.path.join(tmp, "all.log"))
            port = lib.free_port()
            d.cmd = setpriv_cmd(caps) + [binary, "run", "--mode", "auto", "--interval", "1s",
                                         "--web.listen-address", f"127.0.0.1:{port}"]
            d.start()
            # Wait for a sample inside a check with a named call site, not just any sample: at
            # 99 Hz the flood puts ~2 samples/s inside checks, so the first drains can have none
            # (a wait for "any kernel sample" made this flaky).
            deadline = time.monotonic() + 30
            samples = None
            while time.monotonic() < deadline and d.alive():
                try:
                    status, text = lib.http_get(f"http://127.0.0.1:{port}/metrics", 2)
                    if status == 200:
                        samples = lib.parse_metrics(text)
                        if named_site_sampled(samples):
                            break
                except OSError:
                    pass
                time.sleep(0.5)
            attached = lib.select(samples or [], "hucprof_probe_attached", target="cpu-clock",
                                  mode="perf_event")
            check(samples is not None and [v for _, v in attached] == [1],
                  f"as uid {NOBODY} with only {' '.join(caps)}: sampler attached, /metrics served",
                  d.log_tail())
            check(named_site_sampled(samples or []),
                  "call sites are symbolized (kallsyms addresses visible) within 30 s of flood",
                  d.log_tail())
            rc, clean = d.stop(10)
            check(rc == 0 and clean, "exits 0 on SIGTERM", f"exit {rc}")

            # Each capability is needed: without it, exit 1 quickly with a reason.
            for missing in caps:
                rest = [c for c in caps if c != missing]
                log = os.path.join(tmp, f"without-{missing}.log")
                cmd = setpriv_cmd(rest) + [binary, "run", "--mode", "auto", "--interval", "1s",
                                           "--web.listen-address", f"127.0.0.1:{lib.free_port()}"]
                with open(log, "wb") as f:
                    try:
                        r = subprocess.run(cmd, stdout=f, stderr=subprocess.STDOUT, timeout=30)
                        rc = r.returncode
                    except subprocess.TimeoutExpired:
                        rc = None
                with open(log, encoding="utf-8", errors="replace") as f:
                    out = f.read().strip()
                check(rc == 1, f"without cap_{missing}: exits 1 (not restarted by the unit)",
                      f"exit {rc}: {out[-400:]}")
                check(bool(out), f"without cap_{missing}: says why", "no output")
                print(f"     {out.splitlines()[-1][:200] if out else ''}")
        finally:
            flood.stop()
    return checks.finish()


if __name__ == "__main__":
    sys.exit(main())
