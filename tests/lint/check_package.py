#!/usr/bin/env python3
"""package_deb: the Debian package as Debian's own tools see it, and what it would do to a machine.

Builds it with scripts/build-deb.sh --reuse BUILD_DIR (dpkg-buildpackage, debhelper) into
BUILD_DIR/deb/ (tests/lib/debian_package.py: once, shared with vm_systemd), then:
  - lintian --pedantic --display-info: no tag at all (error, warning, info, pedantic), except
    those overridden in debian/ with a comment saying why;
  - the files land where deploy/README.md says, /etc/hucprof/hucprof.yaml is a conffile,
    Depends was computed from the binary (libbpf, libssl3, no civetweb);
  - the binary is hardened (readelf: BIND_NOW, GNU_RELRO, PIE; the stack protector and
    fortified libc calls linked in);
  - the maintainer scripts (dh_installsystemd's) enable nothing: no systemctl enable/start,
    `deb-systemd-helper enable` only for a unit the administrator had enabled, and
    `deb-systemd-invoke` (which never starts a disabled unit) only for start/restart after
    configure and stop on removal. vm_systemd checks what they do on a real system.

Usage: check_package.py --build-dir BUILD --hucprof BINARY   (exit 77: hucprof not built, or
dpkg-dev/debhelper/lintian missing)
"""

import argparse
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.normpath(os.path.join(HERE, "..", ".."))
sys.dont_write_bytecode = True
sys.path.insert(0, os.path.join(REPO, "tests", "lib"))
import debian_package  # noqa: E402
EXPECTED_FILES = [
    "./usr/bin/hucprof",
    "./lib/systemd/system/hucprof.service",
    "./etc/hucprof/hucprof.yaml",
    "./usr/share/hucprof/dashboards/hucprof-fleet.json",
    "./usr/share/hucprof/dashboards/hucprof-callsite.json",
    "./usr/share/hucprof/dashboards/hucprof-health.json",
    "./usr/share/hucprof/prometheus/hucprof.rules.yml",
    "./usr/share/hucprof/prometheus/prometheus.yml",
    "./usr/share/hucprof/grafana/provisioning/dashboards/hucprof.yaml",
    "./usr/share/hucprof/kubernetes/daemonset.yaml",
    "./usr/share/hucprof/kubernetes/scrapers-rbac.yaml",
    "./usr/share/hucprof/parca/parca.yaml",
    "./usr/share/hucprof/alloy/hucprof.alloy",
    "./usr/share/doc/hucprof/deploy.md",
    "./usr/share/doc/hucprof/README.md",
    "./usr/share/doc/hucprof/docs/metrics.md",
    "./usr/share/doc/hucprof/docs/flame-graph.png",
    "./usr/share/doc/hucprof/copyright",
    "./usr/share/doc/hucprof/changelog.gz",
    "./usr/share/hucprof/web-config.yaml.example",
]
COMMANDS = ["hucprof", "hucprof-run", "hucprof-doctor", "hucprof-record", "hucprof-report",
            "hucprof-top", "hucprof-version"]

passed, failed = 0, []


def check(cond, what, detail=""):
    global passed
    if cond:
        passed += 1
        print(f"ok   {what}")
    else:
        failed.append(what)
        print(f"FAIL {what}" + (f"\n     {detail}" if detail else ""))
    return cond


def run(cmd, **kw):
    return subprocess.run(cmd, capture_output=True, text=True, **kw)


def check_lintian(deb):
    t = time.monotonic()
    r = run(["lintian", "--pedantic", "--display-info", "--show-overrides", "--no-tag-display-limit",
             deb], timeout=600)
    out = r.stdout + r.stderr
    print(f"lintian --pedantic --display-info ({time.monotonic() - t:.0f} s):")
    print("\n".join("     " + line for line in out.splitlines()) or "     (nothing)")
    tags = [l for l in out.splitlines() if re.match(r"^[EWIPX]: ", l)]
    overridden = [l for l in out.splitlines() if re.match(r"^O: ", l)]
    for level, name in (("E", "errors"), ("W", "warnings"), ("I", "info tags"),
                        ("P", "pedantic tags")):
        these = [l for l in tags if l.startswith(level + ":")]
        check(not these, f"lintian: no {name}", "; ".join(these))
    check(r.returncode == 0, "lintian exits 0", out[-500:])
    # An override without a comment above it is not justified.
    overrides = os.path.join(REPO, "debian", "hucprof.lintian-overrides")
    if os.path.exists(overrides):
        lines = open(overrides).read().splitlines()
        for i, line in enumerate(lines):
            if line.strip() and not line.startswith("#"):
                check(i > 0 and lines[i - 1].startswith("#"),
                      f"lintian override {line.split()[0]} has a comment saying why")
    print(f"     {len(overridden)} overridden tag(s)")


def check_hardening(binary):
    dyn = run(["readelf", "-dW", binary]).stdout
    hdr = run(["readelf", "-hlW", binary]).stdout
    syms = run(["readelf", "--dyn-syms", "-W", binary]).stdout
    check(re.search(r"\(FLAGS\).*\bBIND_NOW\b", dyn) or re.search(r"\(FLAGS_1\).*\bNOW\b", dyn),
          "binary: BIND_NOW (-z now)")
    check("GNU_RELRO" in hdr, "binary: GNU_RELRO (-z relro)")
    check(re.search(r"Type:\s+DYN", hdr) is not None, "binary: position independent (PIE)")
    check("__stack_chk_fail" in syms, "binary: stack protector (__stack_chk_fail)")
    fortified = sorted(set(re.findall(r"\b(__\w+_chk)@", syms)) - {"__stack_chk_fail"})
    check(bool(fortified), f"binary: fortified libc calls ({', '.join(fortified[:6])} ...)")


def check_scripts(ctl):
    for script in ("preinst", "postinst", "prerm", "postrm"):
        path = os.path.join(ctl, script)
        if not os.path.exists(path):
            continue
        check(os.access(path, os.X_OK), f"{script} is executable")
        code = "\n".join(l for l in open(path).read().splitlines()
                         if not l.lstrip().startswith("#"))
        check(re.search(r"systemctl\s+(--\S+\s+)*(enable|start|restart|reenable|preset)\b", code)
              is None, f"{script}: no systemctl enable/start/restart")
        actions = set(re.findall(r"deb-systemd-invoke\s+(\S+)", code))
        actions |= set(re.findall(r"_dh_action=(\w+)", code))
        actions.discard("$_dh_action")
        allowed = {"postinst": {"start", "restart", "try-restart"}, "prerm": {"stop"}}.get(
            script, set())
        check(actions <= allowed, f"{script}: deb-systemd-invoke only {sorted(allowed) or 'never'}"
              f" ({sorted(actions) or 'none'})")
        for m in re.finditer(r"deb-systemd-helper\s+enable\b", code):
            before = code[:m.start()].rsplit("fi", 1)[-1]
            check("was-enabled" in before,
                  f"{script}: deb-systemd-helper enable only for a unit that was enabled before")


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--build-dir", required=True)
    ap.add_argument("--hucprof", required=True, help="the built binary (skip when absent)")
    args = ap.parse_args()
    for tool, pkg in (("dpkg-buildpackage", "dpkg-dev"), ("dh", "debhelper"),
                      ("lintian", "lintian"), ("readelf", "binutils")):
        if not shutil.which(tool):
            print(f"SKIP package: {tool} not installed ({pkg}; scripts/install-deps.sh)")
            return 77
    if not os.path.isfile(args.hucprof):
        print(f"SKIP package: hucprof not built ({args.hucprof})")
        return 77

    with tempfile.TemporaryDirectory(prefix="hucprof-pkg-") as tmp:
        t = time.monotonic()
        try:
            deb = str(debian_package.ensure_deb(Path(args.build_dir), Path(args.hucprof)))
        except debian_package.PackageError as e:
            check(False, "scripts/build-deb.sh --reuse builds the package", str(e))
            print(f"{passed} passed, {len(failed)} failed")
            return 1
        check(True, f"scripts/build-deb.sh --reuse builds the package ({time.monotonic() - t:.0f} s)")
        name = os.path.basename(deb)
        check(re.fullmatch(r"hucprof_[0-9][^_]*_[a-z0-9]+\.deb", name) is not None, f"file name {name}")
        check_lintian(deb)

        listing = run(["dpkg-deb", "-c", deb]).stdout
        paths = {line.split()[5] for line in listing.splitlines() if line.strip()}
        for f in EXPECTED_FILES:
            check(f in paths, f"package installs {f[1:]}")
        for cmd in COMMANDS:
            check(f"./usr/share/man/man1/{cmd}.1.gz" in paths, f"man page {cmd}(1)")
        check(not any(p.startswith("./usr/local") for p in paths), "nothing under /usr/local")
        fields = {f: run(["dpkg-deb", "-f", deb, f]).stdout.strip()
                  for f in ("Package", "Depends", "Section", "Architecture")}
        check(fields["Package"] == "hucprof", "Package: hucprof")
        check("libbpf" in fields["Depends"] and "libc6" in fields["Depends"],
              f"Depends computed from the binary ({fields['Depends']})")
        check("libssl3" in fields["Depends"] and "civetweb" not in fields["Depends"],
              "Depends on libssl3, not on civetweb")
        ctl = os.path.join(tmp, "control")
        subprocess.run(["dpkg-deb", "-e", deb, ctl], check=True)
        with open(os.path.join(ctl, "conffiles")) as f:
            check("/etc/hucprof/hucprof.yaml" in f.read().split(),
                  "/etc/hucprof/hucprof.yaml is a conffile")
        check_scripts(ctl)
        root = os.path.join(tmp, "root")
        subprocess.run(["dpkg-deb", "-x", deb, root], check=True)
        check_hardening(os.path.join(root, "usr", "bin", "hucprof"))
    print(f"{passed} passed, {len(failed)} failed")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
