#!/usr/bin/env python3
"""CI must run what the README tells users to run: the command in the README's "Run every test
tier" block is the command .ci/run executes, and the "Run hucprof" block names scripts/run.sh.
Exit 0 when they agree, 1 naming the difference."""

import re
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]


def first_command_after(readme: str, heading: str) -> str | None:
    """The first line of the first ```sh block after `heading`, without its comment."""
    at = readme.find(heading)
    if at < 0:
        return None
    m = re.search(r"```sh\n(.*?)\n", readme[at:])
    return m.group(1).split("#", 1)[0].strip() if m else None


def main() -> int:
    readme = (REPO / "README.md").read_text()
    ci = (REPO / ".ci" / "run").read_text()
    problems = []
    test_cmd = first_command_after(readme, "**Run every test tier**")
    run_cmd = first_command_after(readme, "**Run hucprof in the foreground")
    ci_cmds = [l.strip() for l in ci.splitlines() if l.strip().startswith("exec ")]
    if test_cmd is None:
        problems.append("README.md has no ```sh block after '**Run every test tier**'")
    elif ci_cmds != [f"exec {test_cmd}"]:
        problems.append(f".ci/run runs {ci_cmds or 'nothing via exec'}, README says {test_cmd!r}")
    if run_cmd != "scripts/run.sh":
        problems.append(f"README's run command is {run_cmd!r}, expected 'scripts/run.sh'")
    for cmd in (test_cmd, run_cmd):
        if cmd and not (REPO / cmd.split()[0]).is_file():
            problems.append(f"README command {cmd!r} names a file that does not exist")
    for p in problems:
        print(f"FAIL: {p}")
    if not problems:
        print(f"ok: README test command {test_cmd!r} is what .ci/run runs; run command {run_cmd!r}")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
