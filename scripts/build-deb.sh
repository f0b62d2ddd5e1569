#!/usr/bin/env bash
# Builds the Debian package the Debian way (dpkg-buildpackage, debhelper: debian/) into OUT, from
# a scratch copy of the tree (with --reuse: of debian/ alone) so that the checkout stays clean.
# Prints the .deb's path last.
#
#   scripts/build-deb.sh                     full build in OUT/src/obj-<triplet>/ with
#                                            dpkg-buildflags' hardening flags
#   scripts/build-deb.sh --arch arm64        cross: the daemon built by scripts/build.sh --arch arm64
#                                            (its sysroot); -> hucprof_<version>_arm64.deb
#   scripts/build-deb.sh --reuse BUILD_DIR   package an existing build tree instead (the tests: the
#                                            binary they drive, no second compile)
#   scripts/build-deb.sh --out DIR           default: build-deb/
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
arch=host
reuse=
out=$here/build-deb
while [ $# -gt 0 ]; do
  case $1 in
    --arch) arch=${2:?--arch needs a value: host or arm64}; shift 2 ;;
    --reuse) reuse=$(cd "${2:?--reuse needs a build directory}" && pwd); shift 2 ;;
    --out) out=${2:?--out needs a directory}; shift 2 ;;
    *) echo "build-deb.sh: unknown argument '$1' (usage: build-deb.sh [--arch host|arm64]" \
         "[--reuse BUILD_DIR] [--out DIR])" >&2; exit 2 ;;
  esac
done
for tool in dpkg-buildpackage dh; do
  command -v $tool >/dev/null ||
    { echo "build-deb.sh: $tool not found (scripts/install-deps.sh installs dpkg-dev and debhelper)" >&2; exit 1; }
done
host_arch=$(dpkg --print-architecture)
[ "$arch" = host ] && arch=$host_arch
args=(-b -us -uc)  # binary packages, unsigned
# A cross build's dependencies are the arm64 sysroot's (scripts/arm64-sysroot.sh), not installed
# :arm64 packages, and a reused tree was configured already: dpkg-checkbuilddeps cannot see them.
[ "$arch" != "$host_arch" ] && args+=(-a"$arch" -d)
[ -n "$reuse" ] && args+=(-d)

mkdir -p "$out"
out=$(cd "$out" && pwd)
work=$out/src
rm -rf "$work" "$out"/hucprof_*.deb "$out"/hucprof-dbgsym_*.deb
mkdir -p "$work"
if [ -n "$reuse" ]; then
  # The build tree knows where its sources are; debian/ is all the package build reads.
  cp -a "$here/debian" "$work/"
elif git -C "$here" rev-parse --is-inside-work-tree >/dev/null 2>&1; then
  # The tracked files as they are now (edits included), never build trees or caches.
  git -C "$here" ls-files -z --cached --others --exclude-standard |
    (cd "$here" && xargs -0 cp --parents -a -t "$work" 2>/dev/null || true)
  [ -f "$work/debian/rules" ] || { echo "build-deb.sh: copying the tree failed" >&2; exit 1; }
else
  tar -C "$here" --exclude='./build*' --exclude=./.git -cf - . | tar -C "$work" -xf -
fi
(cd "$work" && HUC_BUILD_DIR=$reuse dpkg-buildpackage "${args[@]}") >&2
version=$(dpkg-parsechangelog -l "$here/debian/changelog" -SVersion)
deb=$out/hucprof_${version}_${arch}.deb
[ -f "$deb" ] || { echo "build-deb.sh: dpkg-buildpackage made no $deb" >&2; exit 1; }
echo "$deb"
