#!/usr/bin/env bash
# Installs every Debian package hucprof needs to build, run and test. Idempotent: packages that
# are already present are left alone, so the README commands and CI can call it every time.
set -euo pipefail

packages=(
  # build
  cmake ninja-build g++ clang llvm pkg-config clang-format
  libclang-rt-14-dev  # libFuzzer for fuzz/ (a Recommends of clang, which --no-install-recommends skips)
  libbpf-dev bpftool libelf-dev zlib1g-dev
  prometheus-cpp-dev libprotobuf-dev protobuf-compiler
  libcli11-dev libspdlog-dev libfmt-dev libyaml-cpp-dev libgtest-dev libgmock-dev libbenchmark-dev
  libsystemd-dev linux-libc-dev libcap-dev
  # web server: Boost.Beast/Asio (headers), OpenSSL for TLS, libxcrypt's bcrypt for basic auth
  libboost-dev libssl-dev libcrypt-dev
  # the kernel's debuginfo: libdw (inline chains, lines), libdebuginfod1 (dlopen'ed by
  # --debuginfo.debuginfod); the tests' references: binutils' addr2line, a real debuginfod
  libdw-dev libdebuginfod1 binutils debuginfod
  # tests: host tier, VM tier, e2e tier
  curl python3 python3-yaml iproute2 procps strace dpkg-dev util-linux
  python3-prometheus-client  # the Python tests' /metrics parser (tests/lib/hucprof_testlib.py)
  # the Debian package: debhelper builds it, lintian judges it, help2man writes its man pages
  # from --help; debootstrap makes the clean Debian root vm_systemd installs it on
  debhelper lintian help2man man-db debootstrap
  golang-go golang-github-go-logfmt-logfmt-dev  # go-logfmt reads our logfmt (tests/tools)
  qemu-system-x86 busybox-static xz-utils zstd cpio kmod
  # arm64 (vm_arm64): the cross compiler and the arm64 guest's emulator; the sysroot, kernels and
  # busybox are arm64 packages, downloaded and unpacked, never installed (dpkg multiarch below);
  # aarch64-linux-gnu-addr2line is the arm64 debuginfo check's reference
  g++-aarch64-linux-gnu binutils-aarch64-linux-gnu qemu-system-arm
  prometheus
  # web tests: certificates (openssl) and bcrypt hashes (htpasswd) made by tools, not by us
  openssl apache2-utils
  # bench/http_front.py: the 16-client load generator
  wrk
  # bench/vm/probe_overhead.py: the empty fentry program and the stack-keyed count it compares with
  bpftrace
  # tests with real readers: Google's pprof (built from source offline, with golang-go above),
  # headless Chromium, and perf as the reference sampler (host_interrupts)
  golang-github-google-pprof-dev chromium linux-perf
  tmux  # host_top: the real terminal `hucprof top` is driven in (send-keys, capture-pane)
)

# apt-get download of :arm64 packages needs dpkg to know the architecture; adding it installs
# nothing by itself.
need_update=
if ! dpkg --print-foreign-architectures | grep -qx arm64; then
  if [ "$(id -u)" -eq 0 ]; then
    echo "install-deps: dpkg --add-architecture arm64 (for the arm64 cross build and guests)"
    dpkg --add-architecture arm64
    need_update=1
  else
    echo "install-deps: dpkg does not know arm64, so vm_arm64 will skip; as root:" \
      "dpkg --add-architecture arm64 && apt-get update" >&2
  fi
fi

missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -eq 0 ]; then
  [ -z "$need_update" ] || apt-get update -q
  echo "install-deps: all ${#packages[@]} packages present"
  exit 0
fi
if [ "$(id -u)" -ne 0 ]; then
  echo "install-deps: missing packages (${missing[*]}); run as root to install them" >&2
  exit 1
fi
echo "install-deps: installing ${missing[*]}"
export DEBIAN_FRONTEND=noninteractive
apt-get update -q
# --no-install-recommends keeps prometheus from pulling a web of exporters we don't use.
apt-get install -y -q --no-install-recommends "${missing[@]}"
# The Debian prometheus package starts a system service on :9090; our tests run their own.
if systemctl is-active --quiet prometheus 2>/dev/null; then systemctl stop prometheus || true; fi
