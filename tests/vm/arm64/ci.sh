#!/usr/bin/env bash
# ctest vm_arm64: the arm64 proof that fits CI. Cross-builds the daemon alone (at -O0 and in
# batches: the guest needs a correct binary, not a fast one), then boots two Debian arm64
# kernels under TCG (run-guest.sh): Debian 12's 6.12 and the newest of trixie-backports (through
# a private apt list), each with version, doctor (its kernel config where the package installs
# it), fentry and kprobe each exact over 1000 UDP pairs against the kernel's own count, and
# sampling's top call site. The full set (6.1 too, hardened_usercopy=off) is in docs/arm64.md,
# the documented command.
#
#   tests/vm/arm64/ci.sh BUILD_DIR        builds into BUILD_DIR/arm64
set -euo pipefail
here=$(cd "$(dirname "$0")/../../.." && pwd)
build=${1:?usage: ci.sh BUILD_DIR}/arm64
skip() { echo "vm_arm64: SKIP: $*"; exit 77; }

command -v aarch64-linux-gnu-g++ >/dev/null ||
  skip "aarch64-linux-gnu-g++ not installed (scripts/install-deps.sh installs g++-aarch64-linux-gnu)"
command -v qemu-system-aarch64 >/dev/null ||
  skip "qemu-system-aarch64 not installed (scripts/install-deps.sh installs qemu-system-arm)"
dpkg --print-foreign-architectures | grep -qx arm64 ||
  skip "dpkg does not know arm64 (as root: dpkg --add-architecture arm64 && apt-get update)"

start=$(date +%s)
BUILD_DIR=$build BUILD_TYPE=None CFLAGS=-O0 CXXFLAGS=-O0 UNITY_BUILD=ON \
  "$here/scripts/build.sh" --arch arm64 daemon/hucprof
echo "vm_arm64: sysroot and cross build of the daemon took $(($(date +%s) - start)) s"
# Both guests run, whatever the first one gave. Any failure fails the test; otherwise a guest
# that could not run (77, its reason printed) makes the test a skip, never a pass.
rcs=()
# The 6.12 guest also proves the kernel's debuginfo on arm64 (its -dbg package, ~1 GB, fetched
# once per build directory; its vmlinux is kept).
for kernel in "linux-image-6.12-arm64 --debuginfo" "linux-image-arm64 trixie-backports"; do
  read -r meta rest <<<"$kernel"
  suite= opts=()
  case $rest in --*) opts=("$rest") ;; *) suite=$rest ;; esac
  echo "vm_arm64: $meta${suite:+ from $suite}${opts[*]:+ ${opts[*]}}"
  set +e
  HUC_ARM64_KERNEL=$meta HUC_ARM64_SUITE=$suite HUC_PPROF=${1}/tests/tools/pprof \
    "$here/tests/vm/arm64/run-guest.sh" "$build" "${opts[@]}"
  rc=$?
  set -e
  rcs+=("$rc")
  # The guest's own FAIL lines name the failed check; this one names the guest, also when it
  # failed before any check ran (no boot, a timeout).
  [ "$rc" -eq 0 ] || [ "$rc" -eq 77 ] || echo "FAIL: vm_arm64: the $meta${suite:+ ($suite)} guest exited $rc"
done
echo "vm_arm64: guest exit codes ${rcs[*]} (6.12, trixie-backports)"
for rc in "${rcs[@]}"; do [ "$rc" -eq 0 ] || [ "$rc" -eq 77 ] || exit 1; done
for rc in "${rcs[@]}"; do [ "$rc" -eq 0 ] || exit 77; done
exit 0
