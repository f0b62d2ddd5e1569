#!/usr/bin/env bash
# Builds an arm64 sysroot for cross-building hucprof: the Debian arm64 packages hucprof links
# (and everything they depend on) downloaded with apt-get and unpacked with dpkg-deb, never
# installed. Installing them as :arm64 would make dpkg remove host packages the x86 build needs
# (busybox-static, prometheus-cpp-dev, civetweb, libyaml-cpp-dev are not Multi-Arch: same).
#
#   scripts/arm64-sysroot.sh [SYSROOT]      default: build-arm64/sysroot
#
# Needs `dpkg --add-architecture arm64` and `apt-get update` once (root). Re-runnable: the
# resolved package list (names and versions) is the cache key; an unchanged list does nothing.
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
sysroot=${1:-$here/build-arm64/sysroot}
debs=$sysroot.debs
arch=arm64

# What hucprof links (CMakeLists.txt find_package/pkg_check_modules) plus the C/C++ runtime the
# cross compiler links against inside the sysroot.
wanted=(
  libc6-dev libstdc++-12-dev linux-libc-dev
  libbpf-dev libelf-dev libdw-dev zlib1g-dev libsystemd-dev libcap-dev libcrypt-dev libssl-dev
  prometheus-cpp-dev libprotobuf-dev libyaml-cpp-dev libspdlog-dev libfmt-dev libcli11-dev
  libboost-dev libgtest-dev libgmock-dev libbenchmark-dev
)

if ! dpkg --print-foreign-architectures | grep -qx "$arch"; then
  echo "arm64-sysroot: dpkg does not know arm64; run: dpkg --add-architecture arm64 && apt-get update" >&2
  exit 1
fi

# Architecture of every package apt knows by that name (one apt-cache call: it is slow).
arch_of() {
  apt-cache show --no-all-versions "$@" 2>/dev/null |
    awk '/^Package:/ {p = $2} /^Architecture:/ {print p, $2}' | sort -u
}
declare -A is_all=()
while read -r p a; do [ "$a" = all ] && is_all[$p]=1; done < <(arch_of "${wanted[@]}")
roots=()
for p in "${wanted[@]}"; do
  if [ -n "${is_all[$p]:-}" ]; then roots+=("$p"); else roots+=("$p:$arch"); fi
done

# The dependency closure (Depends/PreDepends only). Arch-qualified names are arm64 packages;
# unqualified ones are Architecture: all (headers, CMake files, data) or the host's, skipped.
mapfile -t closure < <(
  apt-cache depends --recurse --no-recommends --no-suggests --no-conflicts --no-breaks \
    --no-replaces --no-enhances "${roots[@]}" 2>/dev/null |
    grep -v '^[ <]' | sort -u)
unqualified=()
for p in "${closure[@]}"; do [[ $p == *:* ]] || unqualified+=("$p"); done
while read -r p a; do [ "$a" = all ] && is_all[$p]=1; done < <(arch_of "${unqualified[@]}")
pkgs=()
for p in "${closure[@]}"; do
  if [[ $p == *:$arch ]] || [ -n "${is_all[$p]:-}" ]; then pkgs+=("$p"); fi
done
if [ ${#pkgs[@]} -lt ${#wanted[@]} ]; then
  echo "arm64-sysroot: apt-cache resolved only ${#pkgs[@]} packages; is the arm64 package list fetched (apt-get update)?" >&2
  exit 1
fi

# Cache key: every package with the version apt would download (one apt-cache call).
key=$(echo "layout 2 (dpkg database)"; apt-cache policy "${pkgs[@]}" 2>/dev/null |
  awk '/^[^ ]/ {p = $1} /^  Candidate:/ {print p $2}' | sort)
if [ -f "$sysroot/.hucprof-sysroot" ] && [ "$(cat "$sysroot/.hucprof-sysroot")" = "$key" ]; then
  echo "arm64-sysroot: $sysroot is up to date (${#pkgs[@]} packages)"
  exit 0
fi

mkdir -p "$debs"
# apt-get download drops to the _apt user when it can; a root-owned build tree is not writable
# for it, which apt only warns about.
(cd "$debs" && apt-get download -q "${pkgs[@]}" 2>&1 | grep -v '^W: Download is performed unsandboxed' || true)

rm -rf "$sysroot"
mkdir -p "$sysroot/usr/lib" "$sysroot/usr/bin" "$sysroot/usr/sbin"
# Debian is usr-merged: /lib is /usr/lib. Keep the links while unpacking (--keep-directory-symlink)
# so packages that still ship /lib/... land in the same tree as those that ship /usr/lib/....
for d in lib bin sbin; do ln -s usr/$d "$sysroot/$d"; done
for p in "${pkgs[@]}"; do
  name=${p%:*}
  deb=$(ls "$debs"/"${name}"_*.deb 2>/dev/null | sort | tail -n1)
  if [ -z "$deb" ]; then
    echo "arm64-sysroot: $p was not downloaded" >&2
    exit 1
  fi
  dpkg-deb --fsys-tarfile "$deb" | tar -x --keep-directory-symlink -C "$sysroot"
done
# A dpkg database describing the unpacked packages, for dpkg-shlibdeps (DPKG_ADMINDIR) when CPack
# computes the arm64 .deb's Depends: which package owns each library under the sysroot, and its
# shlibs/symbols files. Nothing here is installed on the host.
admin=$sysroot/var/lib/hucprof-dpkg
mkdir -p "$admin/info" "$admin/updates"
: >"$admin/status"
echo 1 >"$admin/info/format"  # multiarch layout: info/name:arch.list
for p in "${pkgs[@]}"; do
  name=${p%:*}
  deb=$(ls "$debs"/"${name}"_*.deb | sort | tail -n1)
  ctrl=$(mktemp -d)
  dpkg-deb -e "$deb" "$ctrl"
  pkgarch=$(sed -n 's/^Architecture: //p' "$ctrl/control")
  # Multi-Arch: same packages are known to dpkg as name:arch, the others by name.
  id=$name
  grep -qx 'Multi-Arch: same' "$ctrl/control" && id=$name:$pkgarch
  { grep -v '^ \|^Description' "$ctrl/control" | sed '1a Status: install ok installed'
    echo "Description: unpacked into the hucprof arm64 sysroot"
    echo; } >>"$admin/status"
  # Usr-merged: a file shipped as /lib/x is also /usr/lib/x (the path dpkg-shlibdeps finds).
  dpkg-deb -c "$deb" | awk '{print $6}' | sed -e 's|^\./|/|' -e 's|/$||' -e '/^$/d' |
    awk '{print} /^\/(lib|bin|sbin)\// {print "/usr" $0}' |
    sed "s|^|$sysroot|" >"$admin/info/$id.list"
  for f in shlibs symbols; do
    [ -f "$ctrl/$f" ] && cp "$ctrl/$f" "$admin/info/$id.$f"
  done
  rm -rf "$ctrl"
done

# Absolute symlinks (libfoo.so -> /lib/...) would point into the host; make them relative.
find "$sysroot" -type l -lname '/*' | while read -r link; do
  target=$(readlink "$link")
  ln -sfn "$(realpath -m --relative-to="$(dirname "$link")" "$sysroot$target")" "$link"
done
echo "$key" >"$sysroot/.hucprof-sysroot"
echo "arm64-sysroot: unpacked ${#pkgs[@]} packages into $sysroot"
