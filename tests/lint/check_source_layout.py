#!/usr/bin/env python3
"""check_source_layout: what docs/design.md's "Source layout" promises about the C++ sources,
kept true.

  size      no .cpp/.h under daemon/ is over 500 lines (small files with one job: split a file
            that grows past it by its jobs), and no folder of daemon/ holds over 40 of them
            (rooms by domain: split a folder that grows past it into folders by what they do)
  layering  nothing under daemon/export/, daemon/web/ or daemon/web_input/ includes "cli/...":
            the exporter and the web front link neither CLI11 nor libcap (what they share with
            the CLI lives in daemon/core/ or daemon/config/); a room of daemon/core/ includes
            only the rooms below it in CORE_ROOMS (docs/design.md's source layout), so that
            its arrows point one way
  regex     no C++ file under daemon/, tests/, bench/ or fuzz/ includes <regex>: std::regex broke
            the sanitize tier's GCC -O1 build twice

Usage: check_source_layout.py [--root DIR] CHECK...   (CHECK: size, layering, regex; default all)
--root: the tree to check (default: this repository), e.g. a deliberately broken copy.
Exit 0 when every check holds, 1 naming each file (and line) that breaks one."""

import argparse
import os
import re
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.normpath(os.path.join(HERE, "..", ".."))

MAX_LINES = 500
MAX_FOLDER_FILES = 40
# daemon/core/'s rooms from the top down, as docs/design.md's source layout lists them.
CORE_ROOMS = ["pipeline", "profile", "cost", "drain", "kernel", "workload", "files", "symbols", "text", "base"]
CORE_INCLUDE = re.compile(r"core/([^/]+)/")
CXX_SUFFIXES = (".cpp", ".cc", ".cxx", ".h", ".hh", ".hpp")
INCLUDE = re.compile(r'^\s*#\s*include\s*([<"])([^>"]+)[>"]')


def cxx_files(root: str, top: str, suffixes=CXX_SUFFIXES) -> list[str]:
    """The C++ files under root/top, as paths relative to root; hidden and build directories are
    not the source."""
    found = []
    for where, dirs, files in os.walk(os.path.join(root, top)):
        dirs[:] = sorted(d for d in dirs if not d.startswith((".", "build")))
        found += [os.path.relpath(os.path.join(where, f), root)
                  for f in sorted(files) if f.endswith(suffixes)]
    return found


def includes(root: str, path: str):
    """(line number, delimiter, name) of every #include of the file."""
    with open(os.path.join(root, path), encoding="utf-8", errors="replace") as f:
        for number, line in enumerate(f, 1):
            m = INCLUDE.match(line)
            if m:
                yield number, m.group(1), m.group(2)


def check_size(root: str) -> tuple[int, list[str]]:
    files = cxx_files(root, "daemon", (".cpp", ".h"))
    problems = []
    for path in files:
        with open(os.path.join(root, path), "rb") as f:
            lines = f.read().count(b"\n")
        if lines > MAX_LINES:
            problems.append(f"{path}: {lines} lines, over the {MAX_LINES} a file under daemon/ may "
                            "have: split it by its jobs into files whose names say them "
                            "(docs/design.md, Source layout)")
    by_folder: dict[str, int] = {}
    for path in files:
        by_folder[os.path.dirname(path)] = by_folder.get(os.path.dirname(path), 0) + 1
    for folder, count in sorted(by_folder.items()):
        if count > MAX_FOLDER_FILES:
            problems.append(f"{folder}/: {count} .cpp/.h files, over the {MAX_FOLDER_FILES} a "
                            "folder of daemon/ may hold: split it into folders by what they do "
                            "(docs/design.md, Source layout)")
    return len(files), problems


def check_layering(root: str) -> tuple[int, list[str]]:
    files = [p for top in ("export", "web", "web_input")
             for p in cxx_files(root, os.path.join("daemon", top))]
    problems = []
    for path in files:
        for number, delimiter, name in includes(root, path):
            if delimiter == '"' and name.startswith("cli/"):
                problems.append(f'{path}:{number}: includes "{name}": daemon/export/, '
                                "daemon/web/ and daemon/web_input/ must not depend on the CLI "
                                "(it links CLI11 and "
                                "libcap); move what they need to daemon/core/ (pure) or "
                                "daemon/config/ (YAML)")
    core = os.path.join("daemon", "core")
    core_files = cxx_files(root, core)
    for path in core_files:
        parts = os.path.relpath(path, core).split(os.sep)
        room = parts[0]
        if len(parts) == 1:
            problems.append(f"{path}: a file of daemon/core/ lives in one of its rooms "
                            f"({', '.join(CORE_ROOMS)}; docs/design.md, Source layout)")
            continue
        if room not in CORE_ROOMS:
            problems.append(f"{path}: daemon/core/{room}/ is not one of the rooms "
                            f"({', '.join(CORE_ROOMS)}): give it its place in CORE_ROOMS and in "
                            "docs/design.md's source layout")
            continue
        for number, delimiter, name in includes(root, path):
            m = CORE_INCLUDE.match(name) if delimiter == '"' else None
            if not m or m.group(1) == room:
                continue
            used = m.group(1)
            if used not in CORE_ROOMS or CORE_ROOMS.index(used) < CORE_ROOMS.index(room):
                problems.append(f'{path}:{number}: includes "{name}": daemon/core/{room}/ may '
                                f"include only the rooms below it "
                                f"({', '.join(CORE_ROOMS[CORE_ROOMS.index(room) + 1:]) or 'none'}); "
                                "move the file to the room where its users and its includes "
                                "meet (docs/design.md, Source layout)")
    return len(files) + len(core_files), problems


def check_regex(root: str) -> tuple[int, list[str]]:
    files = [p for top in ("daemon", "tests", "bench", "fuzz") for p in cxx_files(root, top)]
    problems = []
    for path in files:
        for number, delimiter, name in includes(root, path):
            if delimiter == "<" and name.strip() == "regex":
                problems.append(f"{path}:{number}: includes <regex>: std::regex broke the sanitize "
                                "tier's GCC -O1 build twice; scan the text with string_view and "
                                "find instead")
    return len(files), problems


CHECKS = {"size": check_size, "layering": check_layering, "regex": check_regex}


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--root", default=REPO, help="the tree to check (default: this one)")
    parser.add_argument("checks", nargs="*", metavar="CHECK", help=", ".join(CHECKS))
    args = parser.parse_args(argv)
    if unknown := [c for c in args.checks if c not in CHECKS]:
        parser.error(f"unknown check {unknown[0]!r} (one of {', '.join(CHECKS)})")
    root = os.path.abspath(args.root)
    failed = False
    for name in args.checks or list(CHECKS):
        count, problems = CHECKS[name](root)
        if count == 0:  # a wrong --root must not pass for a clean tree
            problems = [f"{name}: no C++ files found under {root}"]
        for p in problems:
            print(f"FAIL: {p}")
        if problems:
            failed = True
        else:
            print(f"ok: {name}: {count} files")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
