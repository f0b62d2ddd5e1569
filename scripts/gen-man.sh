#!/usr/bin/env bash
# Writes a man page per command (hucprof.1, hucprof-run.1, ...) from the real --help of a built
# hucprof with help2man, into OUT_DIR (default docs/man/, where they are kept in git and from
# where the package installs them). The lint_man_pages test regenerates them and fails when the
# kept ones differ, so they cannot drift from the flags.
#
#   scripts/gen-man.sh [HUCPROF_BINARY] [OUT_DIR]      default: build/daemon/hucprof docs/man
#
# The date is debian/changelog's (SOURCE_DATE_EPOCH), the version the project's, so the pages
# depend on nothing but the tree. Extra sections come from docs/man/*.h2m.
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
bin=$(realpath "${1:-$here/build/daemon/hucprof}")
out=${2:-$here/docs/man}
command -v help2man >/dev/null ||
  { echo "gen-man.sh: help2man not found (scripts/install-deps.sh installs it)" >&2; exit 1; }
[ -x "$bin" ] || { echo "gen-man.sh: $bin is not an executable (build hucprof first)" >&2; exit 1; }
version=$(dpkg-parsechangelog -l "$here/debian/changelog" -SVersion)
SOURCE_DATE_EPOCH=$(dpkg-parsechangelog -l "$here/debian/changelog" -STimestamp)
export SOURCE_DATE_EPOCH
mkdir -p "$out"
wrappers=$(mktemp -d)
trap 'rm -rf "$wrappers"' EXIT

page() {  # page NAME WRAPPED_COMMAND DESCRIPTION
  local name=$1 cmd=$2 description=$3
  printf '#!/bin/sh\nexec "%s" %s "$@"\n' "$bin" "$cmd" >"$wrappers/$name"
  chmod +x "$wrappers/$name"
  local include=()
  [ -f "$here/docs/man/$name.h2m" ] && include+=(--include="$here/docs/man/$name.h2m")
  include+=(--include="$here/docs/man/common.h2m")
  help2man --no-info --section=1 --source="hucprof $version" --manual="hucprof manual" \
    --version-string="$version" --name="$description" "${include[@]}" \
    --output="$out/$name.1" "$wrappers/$name"
}

page hucprof "" "the hardened-usercopy profiler"
page hucprof-run run "profile continuously and serve Prometheus metrics and pprof profiles"
page hucprof-doctor doctor "say what this kernel allows and what hucprof run will do"
page hucprof-record record "profile for a while, or while a command runs, into a pprof file"
page hucprof-report report "print a recorded profile's cost table, top stacks and verdict"
page hucprof-top top "the call sites ranked live by their share of busy CPU, like perf top"
page hucprof-version version "print hucprof's version"
