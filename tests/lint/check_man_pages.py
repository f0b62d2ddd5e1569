#!/usr/bin/env python3
"""lint_man_pages: docs/man/*.1 are what help2man makes of the built binary's --help
(scripts/gen-man.sh), so a flag cannot be added, renamed or reworded without its man page; and
man renders each page without a warning (what lintian's manpage checks run).

Usage: check_man_pages.py --hucprof BINARY   (exit 77: help2man or man missing)
To update the pages: scripts/gen-man.sh build/daemon/hucprof
"""

import argparse
import difflib
import os
import shutil
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.normpath(os.path.join(HERE, "..", ".."))
MAN_DIR = os.path.join(REPO, "docs", "man")


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--hucprof", required=True)
    args = ap.parse_args()
    for tool, pkg in (("help2man", "help2man"), ("man", "man-db"),
                      ("dpkg-parsechangelog", "dpkg-dev")):
        if not shutil.which(tool):
            print(f"SKIP: {tool} not installed ({pkg}; scripts/install-deps.sh)")
            return 77
    failures = []
    with tempfile.TemporaryDirectory() as tmp:
        r = subprocess.run([os.path.join(REPO, "scripts", "gen-man.sh"), args.hucprof, tmp],
                           capture_output=True, text=True, timeout=120)
        if r.returncode != 0:
            print(f"FAIL: scripts/gen-man.sh: {r.stderr.strip()}")
            return 1
        made = sorted(f for f in os.listdir(tmp) if f.endswith(".1"))
        kept = sorted(f for f in os.listdir(MAN_DIR) if f.endswith(".1"))
        if made != kept:
            failures.append(f"pages differ: generated {made}, docs/man has {kept}")
        for name in made:
            new = open(os.path.join(tmp, name)).read().splitlines(keepends=True)
            path = os.path.join(MAN_DIR, name)
            old = open(path).read().splitlines(keepends=True) if os.path.exists(path) else []
            diff = list(difflib.unified_diff(old, new, f"docs/man/{name}", f"generated/{name}"))
            if diff:
                failures.append(f"docs/man/{name} is not what --help says now")
                sys.stdout.writelines(diff[:60])
            else:
                print(f"ok   docs/man/{name} matches --help")
            env = dict(os.environ, LC_ALL="C.UTF-8", MANROFFSEQ="", MANWIDTH="80")
            r = subprocess.run(["man", "--warnings", "-E", "UTF-8", "-l", "-Tutf8", "-Z",
                                os.path.join(tmp, name)], capture_output=True, text=True, env=env)
            if r.returncode != 0 or r.stderr.strip():
                failures.append(f"man warns about {name}: {r.stderr.strip()[:300]}")
            else:
                print(f"ok   man renders {name} without a warning")
    for f in failures:
        print(f"FAIL: {f}")
    if failures:
        print("to update: scripts/gen-man.sh build/daemon/hucprof")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
