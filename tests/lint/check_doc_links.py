#!/usr/bin/env python3
"""lint_doc_links: every relative link in the tree's Markdown files (README.md, docs/*.md,
deploy/README.md, tests/**/README.md, ...) names a file or directory that
exists in the tree, and every #anchor names a heading of its Markdown file (GitHub's anchor rule,
tests/lib/markdown_anchors.py). Links inside code blocks and inline code are not links; links to
other sites (http:, https:, mailto:) are not checked (no network in the unit tier).

Usage: check_doc_links.py [FILE.md ...]   (default: every *.md of the tree, build trees left out)
Exit 0 when every link resolves, 1 naming each one that does not, by file and line."""

import os
import re
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.normpath(os.path.join(HERE, "..", ".."))
sys.path.insert(0, os.path.join(REPO, "tests", "lib"))
from markdown_anchors import markdown_anchors  # noqa: E402

# [text](target) and ![alt](target), target up to the first space (an optional "title" follows).
LINK = re.compile(r"!?\[(?:[^\]\\]|\\.)*\]\(\s*<?([^)\s>]+)>?(?:\s+\"[^\"]*\")?\s*\)")
INLINE_CODE = re.compile(r"`+[^`]*`+")


def links(path: str):
    """(line number, target) of every Markdown link outside code."""
    in_code = False
    with open(path, encoding="utf-8") as f:
        for number, line in enumerate(f, 1):
            if line.lstrip().startswith("```"):
                in_code = not in_code
                continue
            if in_code:
                continue
            for m in LINK.finditer(INLINE_CODE.sub("", line)):
                yield number, m.group(1)


def problems_in(path: str) -> list[str]:
    found = []
    shown = os.path.relpath(path, REPO)
    anchors_of: dict[str, set[str]] = {}
    for number, target in links(path):
        if re.match(r"^[a-z][a-z0-9+.-]*:", target):  # http:, https:, mailto:, ...
            continue
        file_part, _, anchor = target.partition("#")
        resolved = (os.path.normpath(os.path.join(os.path.dirname(path), file_part))
                    if file_part else path)
        where = f"{shown}:{number}: {target}"
        if not resolved.startswith(REPO + os.sep) and resolved != REPO:
            found.append(f"{where}: points outside the repository")
            continue
        if not os.path.exists(resolved):
            found.append(f"{where}: {os.path.relpath(resolved, REPO)} does not exist")
            continue
        if anchor:
            if not resolved.endswith(".md") or os.path.isdir(resolved):
                continue  # anchors into source files (#L10) are not headings
            if resolved not in anchors_of:
                anchors_of[resolved] = markdown_anchors(resolved)
            if anchor not in anchors_of[resolved]:
                found.append(f"{where}: {os.path.relpath(resolved, REPO)} has no heading "
                             f"with the anchor #{anchor}")
    return found


def markdown_files() -> list[str]:
    """Every .md of the source tree; hidden directories and build trees (build*/) are not it."""
    found = []
    for top, dirs, files in os.walk(REPO):
        dirs[:] = sorted(d for d in dirs if not d.startswith((".", "build")))
        found += [os.path.join(top, f) for f in sorted(files) if f.endswith(".md")]
    return found


def main(argv: list[str]) -> int:
    files = [os.path.abspath(a) for a in argv] or markdown_files()
    failures = []
    count = 0
    for path in files:
        count += sum(1 for _ in links(path))
        failures += problems_in(path)
    for f in failures:
        print(f"FAIL: {f}")
    if not failures:
        print(f"ok: {count} links in {len(files)} files resolve")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
