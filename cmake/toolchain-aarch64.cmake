# Cross-building hucprof for arm64 (aarch64) on an x86 Debian host:
#
#   scripts/arm64-sysroot.sh build-arm64/sysroot
#   cmake -S . -B build-arm64 -G Ninja -DCMAKE_TOOLCHAIN_FILE=cmake/toolchain-aarch64.cmake \
#         -DHUC_SYSROOT=$PWD/build-arm64/sysroot
#
# (scripts/build.sh --arch arm64 does both.) Compiler: Debian's g++-aarch64-linux-gnu. Libraries
# and headers: the sysroot of unpacked Debian arm64 packages. Host tools stay host tools: protoc
# (generated code is architecture-neutral), clang/bpftool for the BPF objects (their target is
# picked from CMAKE_SYSTEM_PROCESSOR in cmake/BpfObject.cmake).
set(CMAKE_SYSTEM_NAME Linux)
set(CMAKE_SYSTEM_PROCESSOR aarch64)
set(CMAKE_LIBRARY_ARCHITECTURE aarch64-linux-gnu)

set(CMAKE_C_COMPILER aarch64-linux-gnu-gcc)
set(CMAKE_CXX_COMPILER aarch64-linux-gnu-g++)

if(NOT HUC_SYSROOT)
  set(HUC_SYSROOT ${CMAKE_CURRENT_LIST_DIR}/../build-arm64/sysroot)
endif()
get_filename_component(HUC_SYSROOT ${HUC_SYSROOT} ABSOLUTE)
if(NOT EXISTS ${HUC_SYSROOT}/usr/include/aarch64-linux-gnu)
  message(FATAL_ERROR "no arm64 sysroot at ${HUC_SYSROOT}: run scripts/arm64-sysroot.sh ${HUC_SYSROOT}")
endif()
# Passed on to try_compile projects, which re-read this file.
list(APPEND CMAKE_TRY_COMPILE_PLATFORM_VARIABLES HUC_SYSROOT)
set(CMAKE_SYSROOT ${HUC_SYSROOT})

# Libraries, headers and CMake package files from the sysroot only; programs from the host.
set(CMAKE_FIND_ROOT_PATH ${HUC_SYSROOT})
set(CMAKE_FIND_ROOT_PATH_MODE_PROGRAM NEVER)
set(CMAKE_FIND_ROOT_PATH_MODE_LIBRARY ONLY)
set(CMAKE_FIND_ROOT_PATH_MODE_INCLUDE ONLY)
set(CMAKE_FIND_ROOT_PATH_MODE_PACKAGE ONLY)

# pkg-config: the sysroot's .pc files, paths in them prefixed with the sysroot.
set(ENV{PKG_CONFIG_SYSROOT_DIR} ${HUC_SYSROOT})
set(ENV{PKG_CONFIG_LIBDIR}
    ${HUC_SYSROOT}/usr/lib/aarch64-linux-gnu/pkgconfig:${HUC_SYSROOT}/usr/share/pkgconfig)
set(ENV{PKG_CONFIG_PATH} "")

# The host's protoc (same Debian protobuf version as the sysroot's libprotobuf).
set(Protobuf_PROTOC_EXECUTABLE /usr/bin/protoc CACHE FILEPATH "host protoc")

# Unit-test binaries (and gtest_discover_tests) run under qemu-user when it is installed.
find_program(HUC_QEMU_AARCH64 qemu-aarch64)
if(HUC_QEMU_AARCH64)
  set(CMAKE_CROSSCOMPILING_EMULATOR ${HUC_QEMU_AARCH64} -L ${HUC_SYSROOT})
endif()
