#!/usr/bin/env bash
# Configures and builds hucprof into BUILD_DIR. Used by run.sh and test.sh.
#
#   scripts/build.sh                 the host architecture, into build/
#   scripts/build.sh --arch arm64    cross-build for arm64 into build-arm64/ (needs
#                                    g++-aarch64-linux-gnu and `dpkg --add-architecture arm64`;
#                                    the sysroot is made by scripts/arm64-sysroot.sh, cached)
#   scripts/build.sh [...] TARGET... only these ninja targets (e.g. daemon/hucprof)
# HUCPROF_ARCH=arm64 is the same as --arch arm64. BUILD_TYPE picks CMAKE_BUILD_TYPE; CFLAGS and
# CXXFLAGS seed a new build directory's flags, as CMake does; UNITY_BUILD=ON compiles the
# daemon's sources in batches (CMAKE_UNITY_BUILD: a cold build in ~60 % of the time, for trees
# built from scratch and thrown away); DEBUG_LEVEL=1 gives RelWithDebInfo line tables only (-g1:
# stack traces keep files and lines, a cold build takes ~60 % of -g's time; scripts/test.sh).
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
arch=${HUCPROF_ARCH:-host}
targets=()
while [ $# -gt 0 ]; do
  case $1 in
    --arch) arch=${2:?--arch needs a value: host or arm64}; shift 2 ;;
    --arch=*) arch=${1#--arch=}; shift ;;
    -*) echo "build.sh: unknown option '$1' (usage: build.sh [--arch host|arm64] [TARGET...])" >&2
      exit 2 ;;
    *) targets+=("$1"); shift ;;
  esac
done
host_arch=$(dpkg --print-architecture 2>/dev/null || uname -m)
flags=(-DCMAKE_BUILD_TYPE="${BUILD_TYPE:-RelWithDebInfo}" -DCMAKE_UNITY_BUILD="${UNITY_BUILD:-OFF}")
case ${DEBUG_LEVEL:-} in
  '') ;;
  1) flags+=(-DCMAKE_C_FLAGS_RELWITHDEBINFO="-O2 -g1 -DNDEBUG"
             -DCMAKE_CXX_FLAGS_RELWITHDEBINFO="-O2 -g1 -DNDEBUG") ;;
  *) echo "build.sh: DEBUG_LEVEL='$DEBUG_LEVEL' is not supported (unset or 1)" >&2; exit 2 ;;
esac
[ "$arch" = "$host_arch" ] && arch=host

case $arch in
  host)
    build=${BUILD_DIR:-$here/build}
    cmake -S "$here" -B "$build" -G Ninja "${flags[@]}" >/dev/null
    ;;
  arm64)
    build=${BUILD_DIR:-$here/build-arm64}
    "$here/scripts/arm64-sysroot.sh" "$build/sysroot"
    cmake -S "$here" -B "$build" -G Ninja "${flags[@]}" \
      -DCMAKE_TOOLCHAIN_FILE="$here/cmake/toolchain-aarch64.cmake" -DHUC_SYSROOT="$build/sysroot" \
      >/dev/null
    ;;
  *) echo "build.sh: --arch '$arch' is not supported (host or arm64)" >&2; exit 2 ;;
esac
ninja -C "$build" -j"$(nproc)" "${targets[@]}"
