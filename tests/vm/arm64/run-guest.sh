#!/usr/bin/env bash
# Boots Debian's arm64 kernel in qemu-system-aarch64 (-machine virt -cpu max, TCG) with an arm64
# busybox initramfs and the host root over 9p (read-only), and runs the cross-built hucprof there
# (tests/vm/arm64/init.sh): `hucprof version`, `hucprof doctor`, and for each attach flavour one
# exact UDP row (usercopy_checks_total{callsite="udp_recvmsg",syscall="recvfrom",
# direction="to_user"} must rise by exactly the N recvfrom() calls of udp_pairs) next to the
# kernel's own kprobe event count for the same window.
#
# Per flavour also the netlink vmalloc path (100 64 KiB messages; on 6.12 also 3 of 6 MiB):
# usercopy_subchecks_total{step="vmap_area"} at netlink call sites against the kernel's own
# count of find_vmap_area calls from the check. doctor must say the checks are on and `run` will
# run; no copy of the workload's syscalls may fold as [truncated]. Then sample mode over 200x as
# many pairs: the top call site by CPU samples must be a UDP one, and probe mode's two call sites
# with the most bytes (the payload copies) must hold more than half of the check's samples.
#
#   tests/vm/arm64/run-guest.sh [BUILD_DIR] [--checks-off] [--debuginfo]
#       BUILD_DIR      default: build-arm64 (scripts/build.sh --arch arm64)
#       --checks-off   boot with hardened_usercopy=off instead: doctor must say the checks are
#                      off, and probe mode count nothing over the pairs
#       --debuginfo    also the kernel's debuginfo (Debian's linux-image-RELEASE-dbg:arm64, its
#                      vmlinux unpacked once into BUILD_DIR/vm-arm64/debuginfo): the first probe
#                      run and the sample run use it, and on the host their profiles' inline
#                      chains and lines must be addr2line's (tests/vm/arm64/debuginfo_check.py;
#                      Google's pprof from HUC_PPROF, default BUILD_DIR/../tests/tools/pprof)
#   HUC_ARM64_KERNEL=linux-image-6.12-arm64 for 6.12 (default linux-image-arm64, 6.1)
#   HUC_ARM64_SUITE=trixie|trixie-backports|sid: the kernel from that suite, through a private
#   apt list (HUC_ARM64_KERNEL=linux-image-arm64 there is its newest)
#
# ctest's vm_arm64 (tests/vm/arm64/ci.sh) runs a smaller set; exits 77 when it cannot run. The
# arm64 libraries come from the sysroot (its dynamic loader runs hucprof): an x86 host root has
# no arm64 Python or shell, so the guest flow is busybox sh, not tests/vm's.
set -euo pipefail
here=$(cd "$(dirname "$0")/../../.." && pwd)
build=$here/build-arm64
append= debuginfo=
for arg in "$@"; do
  case $arg in
    --checks-off) append=hardened_usercopy=off ;;
    --debuginfo) debuginfo=1 ;;
    -*) echo "run-guest.sh: unknown option '$arg' (usage: run-guest.sh [BUILD_DIR] [--checks-off] [--debuginfo])" >&2; exit 2 ;;
    *) build=$arg ;;
  esac
done
build=$(realpath "$build")
meta=${HUC_ARM64_KERNEL:-linux-image-arm64}
suite=${HUC_ARM64_SUITE:-}
cache=$build/vm-arm64
skip() { echo "arm64 guest: SKIP: $*" >&2; exit 77; }

command -v qemu-system-aarch64 >/dev/null || skip "qemu-system-aarch64 not installed (qemu-system-arm)"
command -v aarch64-linux-gnu-gcc >/dev/null || skip "aarch64-linux-gnu-gcc not installed"
[ -x "$build/daemon/hucprof" ] || skip "no $build/daemon/hucprof (scripts/build.sh --arch arm64)"
[ -d "$build/sysroot/usr/lib/aarch64-linux-gnu" ] || skip "no sysroot in $build"
mkdir -p "$cache"

# The kernel package $meta depends on today (from $suite through a private apt list when set),
# downloaded and unpacked by the VM tier's own code (tests/vm/fetch_kernel.py: Debian 12's
# packages install into /boot and /lib/modules, the split 7.x ones into /usr/lib/modules), and
# busybox-static:arm64: downloaded and unpacked here, never installed.
set +e
where=$(python3 "$here/tests/vm/fetch_kernel.py" "$cache" "$meta:arm64" "$suite")
rc=$?
set -e
[ $rc -eq 77 ] && skip "cannot fetch $meta:arm64${suite:+ from $suite} (dpkg --add-architecture arm64; apt-get update)"
[ $rc -eq 0 ] || { echo "arm64 guest: fetching $meta:arm64 failed" >&2; exit 1; }
eval "$where"
pkg=$PACKAGE
rel=$RELEASE
if [ ! -x "$cache/busybox/bin/busybox" ]; then
  (cd "$cache" && apt-get download -q busybox-static:arm64 2>&1 | grep -v '^W: Download is performed unsandboxed' || true)
  dpkg-deb -x "$(ls "$cache"/busybox-static_*_arm64.deb | tail -n1)" "$cache/busybox"
fi

dbg= results= unjudged=
pprof=${HUC_PPROF:-$build/../tests/tools/pprof}
if [ -n "$debuginfo" ] && [ ! -x "$pprof" ]; then
  # The guest's other checks still run; the verdict is a skip at best, with this reason.
  unjudged="--debuginfo: no Google's pprof at $pprof (scripts/build.sh builds it; HUC_PPROF)"
  echo "arm64 guest: $unjudged: booting without the debuginfo" >&2
  debuginfo=
fi
if [ -n "$debuginfo" ]; then
  start=$(date +%s)
  set +e
  dbg=$(python3 "$here/tests/vm/arm64/debuginfo_check.py" fetch "$cache" "$rel")
  rc=$?
  set -e
  [ $rc -eq 77 ] && skip "cannot fetch linux-image-$rel-dbg:arm64"
  [ $rc -eq 0 ] || { echo "arm64 guest: fetching linux-image-$rel-dbg:arm64 failed" >&2; exit 1; }
  echo "arm64 guest: debuginfo ready in $(($(date +%s) - start)) s ($dbg)"
  # What the guest saves for the host to judge, on a writable share of its own.
  results=$cache/debuginfo-results
  rm -rf "$results"
  mkdir -p "$results"
fi

# The workloads, static for arm64.
for w in udp_pairs netlink_self; do
  aarch64-linux-gnu-gcc -O2 -static --sysroot="$build/sysroot" -o "$cache/$w" \
    "$here/tests/vm/workloads/$w.c"
done

# Initramfs: busybox, init, the kernel's config where its package installs it (doctor reads it
# there: /boot/config-<release> or /usr/lib/modules/<release>/config) and the virtio-pci + 9p
# modules in dependency order (modinfo's depends, resolved here).
root=$cache/initramfs
rm -rf "$root"
mkdir -p "$root"/{bin,proc,sys,dev,tmp,mnt/host,modules} "$root$(dirname "$CONFIG_INSTALL_PATH")"
cp "$cache/busybox/bin/busybox" "$root/bin/busybox"
ln -s busybox "$root/bin/sh"
cp "$here/tests/vm/arm64/init.sh" "$root/init"
chmod +x "$root/init"
cp "$CONFIG" "$root$CONFIG_INSTALL_PATH"
order=()
add_module() {
  local name=$1 file dep
  for m in "${order[@]}"; do [ "$m" = "$name" ] && return 0; done
  file=$(find "$MODDIR" -name "$name.ko" -o -name "$name.ko.xz" -o -name "$name.ko.zst" | head -n1)
  if [ -z "$file" ]; then
    # Built in on this kernel (6.12 has virtio_pci built in).
    grep -q "/$name.ko\$" "$MODDIR/modules.builtin" && return 0
    echo "arm64 guest: module $name not in $pkg" >&2
    exit 1
  fi
  for dep in $(modinfo -F depends "$file" | tr ',' ' '); do add_module "$dep"; done
  order+=("$name")
  # 6.12 ships xz-compressed modules; busybox insmod wants them plain.
  case $file in
    *.xz) xz -dc "$file" >"$root/modules/$name.ko" ;;
    *.zst) zstd -dcq "$file" >"$root/modules/$name.ko" ;;
    *) cp "$file" "$root/modules/$name.ko" ;;
  esac
}
for m in virtio_pci 9pnet_virtio 9p; do add_module "$m"; done
printf '%s.ko\n' "${order[@]}" >"$root/modules/order"
n=${HUC_ARM64_UDP_N:-1000}
printf 'BUILD=%s\nN=%s\nPAYLOAD=%s\nKCONFIG=%s\nDBG=%s\n' "$build" "$n" 64 \
  "$CONFIG_INSTALL_PATH" "$dbg" >"$root/hucvm.env"
cp "$cache/udp_pairs" "$cache/netlink_self" "$root/bin/"
(cd "$root" && find . | cpio -o -H newc --quiet) >"$cache/initramfs.cpio"

console=$cache/console-$rel${append:+-checks-off}.log
echo "arm64 guest: booting $pkg ($rel) under TCG; console in $console"
start=$(date +%s)
# Debian's arm64 kernels sign every saved return address (pointer authentication): TCG's
# emulation of the architected algorithm (QARMA5) is slow, QEMU's own (pauth-impdef) is not, and
# the guest cannot tell them apart. HUC_ARM64_CPU overrides it.
timeout "${HUC_ARM64_TIMEOUT:-1800}" qemu-system-aarch64 -machine virt \
  -cpu "${HUC_ARM64_CPU:-max,pauth-impdef=on}" -smp 2 -m 1024 \
  -nographic -no-reboot -nic none \
  -kernel "$VMLINUZ" -initrd "$cache/initramfs.cpio" \
  -append "console=ttyAMA0 panic=-1 loglevel=4 rdinit=/init $append" \
  -virtfs local,path=/,mount_tag=hostroot,security_model=none,readonly=on \
  ${results:+-virtfs local,path=$results,mount_tag=results,security_model=none} \
  </dev/null >"$console" 2>&1 || true
echo "arm64 guest: $(($(date +%s) - start)) s wall"
sed -n '/^HUCARM64-BEGIN/,/^HUCARM64-END/p' "$console"
guest=0
grep -q '^HUCARM64-RESULT pass' "$console" || guest=1
if [ -z "$debuginfo" ]; then
  [ $guest -eq 0 ] && [ -n "$unjudged" ] && skip "$unjudged"
  exit $guest
fi
echo "arm64 guest: debuginfo against $(aarch64-linux-gnu-addr2line --version | head -n1)"
start=$(date +%s)
set +e
python3 "$here/tests/vm/arm64/debuginfo_check.py" check "$results" "$dbg" "$rel" "$pprof" "$n"
rc=$?
set -e
echo "arm64 guest: debuginfo check $(($(date +%s) - start)) s"
[ $rc -eq 0 ] || [ $rc -eq 77 ] || echo "FAIL: arm64 guest $rel: debuginfo check (exit $rc)"
[ $guest -eq 0 ] || exit 1
exit $rc
