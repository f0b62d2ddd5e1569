#!/usr/bin/env bash
# Installs every Debian package hucprof needs to build, run and test, and fetches the one test
# dependency Debian does not package: speedscope's npm release (report_speedscope_reads_folded),
# pinned in tests/tools/speedscope.lock and cached in the build dir ($BUILD_DIR, default build/).
# Idempotent: packages that are already present and a cached tarball with the pinned sha512 are
# left alone, so the README commands and CI can call it every time.
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)

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
# npm fetches speedscope (below); a Node.js from elsewhere (NodeSource) brings its own npm, which
# Debian's npm package would conflict with.
command -v npm >/dev/null || packages+=(npm)

# speedscope's npm tarball into $BUILD_DIR/test-deps, checked against the lock's sha512 (and the
# registry's metadata against the lock). It does not fail the install: without the tarball the
# test exits 77 and repeats why, from test-deps/speedscope.error.
fetch_speedscope() {
  local spec integrity dir tgz error tmp registry got
  read -r spec integrity <"$here/tests/tools/speedscope.lock"
  dir="${BUILD_DIR:-$here/build}/test-deps"
  tgz="$dir/${spec/@/-}.tgz"
  error="$dir/speedscope.error"
  sri() { echo "sha512-$(openssl dgst -sha512 -binary "$1" | base64 -w0)"; }
  mkdir -p "$dir"
  if [ -f "$tgz" ] && [ "$(sri "$tgz")" = "$integrity" ]; then
    rm -f "$error"
    return 0
  fi
  rm -f "$tgz"
  if ! command -v npm >/dev/null; then
    echo "npm is not installed" >"$error"
  elif ! registry=$(cd "$dir" && timeout 120 npm view "$spec" dist.integrity 2>&1); then
    echo "npm view $spec: $(echo "$registry" | tail -n 1)" >"$error"
  elif [ "$registry" != "$integrity" ]; then
    echo "the npm registry gives $spec the integrity $registry, the lock $integrity" >"$error"
  else
    tmp=$(mktemp -d)
    if ! got=$(cd "$tmp" && timeout 300 npm pack "$spec" --silent 2>&1); then
      echo "npm pack $spec: $(echo "$got" | tail -n 1)" >"$error"
    elif [ "$(sri "$tmp/$got")" != "$integrity" ]; then
      echo "npm pack $spec gave a tarball whose sha512 is not the lock's" >"$error"
    else
      mv "$tmp/$got" "$tgz"
      rm -f "$error"
    fi
    rm -rf "$tmp"
  fi
  if [ -f "$error" ]; then
    echo "install-deps: no $spec tarball, report_speedscope_reads_folded will skip: $(cat "$error")" >&2
  else
    echo "install-deps: $spec in $dir"
  fi
}

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
  fetch_speedscope
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
fetch_speedscope
