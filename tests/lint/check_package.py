#!/usr/bin/env python3
"""Build the .deb with cpack into a temp dir and check what it would do to a machine:
the files land where deploy/README.md says, the config is a conffile, Depends was computed,
and no maintainer script enables or starts the service.

Usage: check_package.py --build-dir BUILD   (exit 77 = skipped: hucprof not built / no cpack)
"""

import argparse
import os
import re
import shutil
import subprocess
import sys
import tempfile

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
    "./usr/share/doc/hucprof/deploy.md",
    "./usr/share/hucprof/web-config.yaml.example",
]


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--build-dir", required=True)
    ap.add_argument("--hucprof", required=True, help="the built binary (skip when absent)")
    args = ap.parse_args()
    for tool in ("cpack", "dpkg-deb", "dpkg-shlibdeps"):
        if not shutil.which(tool):
            print(f"SKIP package: {tool} not installed")
            return 77
    if not os.path.isfile(args.hucprof):
        print(f"SKIP package: hucprof not built ({args.hucprof})")
        return 77
    config = os.path.join(args.build_dir, "CPackConfig.cmake")
    passed, failed = 0, []

    def check(cond, what, detail=""):
        nonlocal passed
        if cond:
            passed += 1
            print(f"ok   {what}")
        else:
            failed.append(what)
            print(f"FAIL {what}" + (f"\n     {detail}" if detail else ""))
        return cond

    with tempfile.TemporaryDirectory(prefix="hucprof-pkg-") as tmp:
        r = subprocess.run(["cpack", "-G", "DEB", "-B", tmp, "--config", config],
                           capture_output=True, text=True, timeout=300)
        debs = [f for f in os.listdir(tmp) if f.endswith(".deb")]
        if not check(r.returncode == 0 and len(debs) == 1, "cpack -G DEB builds one package",
                     (r.stdout + r.stderr)[-2000:]):
            print(f"{passed} passed, {len(failed)} failed")
            return 1
        deb = os.path.join(tmp, debs[0])
        check(re.fullmatch(r"hucprof_[0-9][^_]*_[a-z0-9]+\.deb", debs[0]) is not None, f"file name {debs[0]}")
        listing = subprocess.run(["dpkg-deb", "-c", deb], capture_output=True, text=True).stdout
        paths = {line.split()[-1] for line in listing.splitlines() if line.strip()}
        for f in EXPECTED_FILES:
            check(f in paths, f"package installs {f[1:]}")
        check(not any(p.startswith("./usr/local") for p in paths), "nothing under /usr/local")
        fields = {}
        for field in ("Package", "Depends", "Section", "Architecture"):
            fields[field] = subprocess.run(["dpkg-deb", "-f", deb, field], capture_output=True, text=True).stdout.strip()
        check(fields["Package"] == "hucprof", "Package: hucprof")
        check("libbpf" in fields["Depends"] and "libc6" in fields["Depends"],
              f"Depends computed from the binary ({fields['Depends']})")
        # TLS is OpenSSL linked normally (civetweb dlopen()ed the unversioned libssl.so that
        # only libssl-dev has); nothing of civetweb is left.
        check("libssl3" in fields["Depends"] and "civetweb" not in fields["Depends"],
              "Depends on libssl3, not on civetweb")
        ctl = os.path.join(tmp, "control")
        subprocess.run(["dpkg-deb", "-e", deb, ctl], check=True)
        with open(os.path.join(ctl, "conffiles")) as f:
            check("/etc/hucprof/hucprof.yaml" in f.read().split(), "/etc/hucprof/hucprof.yaml is a conffile")
        for script in ("preinst", "postinst", "prerm", "postrm"):
            path = os.path.join(ctl, script)
            if not os.path.exists(path):
                continue
            check(os.access(path, os.X_OK), f"{script} is executable")
            with open(path) as f:
                text = f.read()
            code = "\n".join(l for l in text.splitlines() if not l.lstrip().startswith("#"))
            check(re.search(r"systemctl\s+(enable|start|restart|reenable|preset)\b", code) is None
                  and "deb-systemd-helper enable" not in code,
                  f"{script} neither enables nor starts hucprof")
    print(f"{passed} passed, {len(failed)} failed")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
