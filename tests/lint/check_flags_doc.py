#!/usr/bin/env python3
"""lint_flags_doc: docs/flags.md is what scripts/gen-flags.py makes of the built binary's --help,
so no flag can be added, renamed or reworded without the page. On a difference it names each
command whose section differs (or is missing or extra) and shows the diff.

Usage: check_flags_doc.py --hucprof BINARY
To update the page: scripts/gen-flags.py build/daemon/hucprof
"""

import argparse
import difflib
import os
import re
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.normpath(os.path.join(HERE, "..", ".."))
KEPT = os.path.join(REPO, "docs", "flags.md")


def sections(text: str) -> dict[str, str]:
    """Each "## `hucprof ...`" section by its command; the text before the first one as ""."""
    found: dict[str, str] = {}
    command = ""
    for line in text.splitlines(keepends=True):
        m = re.match(r"^## `(hucprof(?: \S+)?)`\s*$", line)
        if m:
            command = m.group(1)
        found[command] = found.get(command, "") + line
    return found


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--hucprof", required=True)
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        made_path = os.path.join(tmp, "flags.md")
        r = subprocess.run([sys.executable, os.path.join(REPO, "scripts", "gen-flags.py"),
                            args.hucprof, made_path], capture_output=True, text=True, timeout=120)
        if r.returncode != 0:
            print(f"FAIL: scripts/gen-flags.py: {r.stderr.strip()}")
            return 1
        with open(made_path, encoding="utf-8") as f:
            made = sections(f.read())
    with open(KEPT, encoding="utf-8") as f:
        kept = sections(f.read())
    failures = []
    for command in sorted(set(made) | set(kept)):
        name = command or "the page's introduction"
        if command not in kept:
            failures.append(f"docs/flags.md has no section for `{command}`, which --help lists")
        elif command not in made:
            failures.append(f"docs/flags.md has a section for `{command}`, which --help does not list")
        elif made[command] != kept[command]:
            what = f"`{command} --help`" if command else "what scripts/gen-flags.py writes"
            diff = difflib.unified_diff(kept[command].splitlines(), made[command].splitlines(),
                                        "docs/flags.md", "generated", lineterm="", n=1)
            failures.append(f"docs/flags.md, {name}, is not {what}:\n    " + "\n    ".join(diff))
        else:
            print(f"ok   {name}")
    for f in failures:
        print(f"FAIL: {f}")
    if failures:
        print("To update the page: scripts/gen-flags.py build/daemon/hucprof")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
