"""VM tier plumbing: fetch a Debian kernel, build a tiny initramfs, boot it under QEMU.

The guest mounts the host's root read-only over 9p and runs one script inside a chroot of it,
so every host path (build tree, test scripts, compiled workloads) is valid in the guest too.
A second, writable 9p share is mounted over the per-run results directory at the *same* path,
so the guest script simply writes files into $HUCVM_RESULTS and the host reads them afterwards.

Python 3 standard library only.
"""

from __future__ import annotations

import dataclasses
import io
import lzma
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import accel
import console_triage

HERE = Path(__file__).resolve().parent
GUEST_INIT = HERE / "guest" / "init.sh"
ACCEL_PROBE_INIT = HERE / "guest" / "accel_probe_init.sh"
# Sourced by every guest /init (this tier's and vm_systemd's), so it is in every initramfs.
GUEST_PREAMBLE = HERE / "guest" / "preamble.sh"

# Exit code ctest treats as "skipped" (SKIP_RETURN_CODE in CMakeLists.txt).
SKIP = 77


class Skip(Exception):
    """The tier cannot run on this machine (missing tool/package source). Not a pass."""


class VmFailure(Exception):
    """The VM run itself failed (boot, module load, mount, hang). Always a test failure."""


def log(msg: str) -> None:
    print(f"[vm] {msg}", file=sys.stderr, flush=True)


# --------------------------------------------------------------------------------------------
# Kernel packages
# --------------------------------------------------------------------------------------------

@dataclasses.dataclass
class Kernel:
    label: str          # short name used in tables: "6.1", "6.12", "trixie-backports"
    meta_package: str   # e.g. linux-image-amd64
    package: str        # resolved ABI package, e.g. linux-image-6.1.0-57-amd64
    root: Path          # extracted package tree
    release: str        # uname -r, e.g. 6.1.0-57-amd64
    suite: str | None = None  # the Debian suite it came from through a private apt list

    def _first(self, *candidates: str) -> Path:
        """The first of the package-relative paths that exists (the first when none does):
        Debian's kernels up to 6.x install vmlinuz, config and System.map into /boot; the split
        7.x packages (linux-binary-, linux-base-, linux-modules-<release>) put them all under
        /usr/lib/modules/<release>/."""
        paths = [self.root / c for c in candidates]
        return next((p for p in paths if p.exists()), paths[0])

    @property
    def vmlinuz(self) -> Path:
        return self._first(f"boot/vmlinuz-{self.release}",
                           f"usr/lib/modules/{self.release}/vmlinuz")

    @property
    def config(self) -> Path:
        return self._first(f"boot/config-{self.release}", f"usr/lib/modules/{self.release}/config")

    @property
    def system_map(self) -> Path:
        return self._first(f"boot/System.map-{self.release}",
                           f"usr/lib/modules/{self.release}/System.map")

    @property
    def moddir(self) -> Path:
        return self._first(f"lib/modules/{self.release}", f"usr/lib/modules/{self.release}")

    @property
    def config_install_path(self) -> str:
        """Where the package installs the config on a machine (what hucprof doctor reads)."""
        return "/" + str(self.config.relative_to(self.root))

    @property
    def cache_dir(self) -> Path:
        """The run's vm-cache, where resolve_kernel extracted this package."""
        return self.root.parent

    def config_value(self, name: str) -> str | None:
        pat = re.compile(rf"^{re.escape(name)}=(.*)$")
        for line in self.config.read_text().splitlines():
            m = pat.match(line)
            if m:
                return m.group(1)
        return None

    def version(self) -> tuple[int, int]:
        """(major, minor) of the release."""
        return kernel_version(self.release)


def kernel_version(release: str) -> tuple[int, int]:
    m = re.match(r"(\d+)\.(\d+)", release)
    if not m:
        raise VmFailure(f"kernel release {release!r} does not start with MAJOR.MINOR")
    return int(m.group(1)), int(m.group(2))


def qemu_binary() -> str:
    path = shutil.which("qemu-system-x86_64")
    if path is None:
        raise Skip("qemu-system-x86_64 not installed")
    return path


def preflight() -> None:
    """Skip early (before downloading anything) if this machine cannot run the tier at all."""
    qemu_binary()
    find_busybox()
    if not Path("/proc/self").exists():
        raise Skip("no /proc")
    try:
        accel.override()
    except accel.AccelError as e:
        raise VmFailure(str(e)) from None


# Debian suites the machine's own apt does not list (its release's are bookworm and its updates)
# are read through a private apt configuration per suite, under the run's vm-cache: its own
# source list, package lists and download cache; the machine's apt configuration is never read
# for them (no sources.list, no preferences) and never changed.
PRIVATE_SUITES = ("trixie", "trixie-backports", "sid")
DEBIAN_MIRROR = "http://deb.debian.org/debian"
DEBIAN_KEYRING = "/usr/share/keyrings/debian-archive-keyring.gpg"
# Package lists this old are fetched again: "the newest kernel" is the one of the day.
APT_LISTS_MAX_AGE_S = 6 * 3600


def private_apt_dir(cache: Path, suite: str) -> Path:
    return cache / "apt" / suite


def apt_options(cache: Path, suite: str | None) -> list[str]:
    """apt-get/apt-cache options for `suite` ([] for the machine's own configuration)."""
    if suite is None:
        return []
    d = private_apt_dir(cache, suite)
    return ["-o", "Dir::Etc::SourceList=/dev/null", "-o", f"Dir::Etc::SourceParts={d}/sources",
            "-o", "Dir::Etc::Preferences=/dev/null", "-o", f"Dir::Etc::PreferencesParts={d}/prefs",
            "-o", f"Dir::State::Lists={d}/lists", "-o", f"Dir::Cache={d}/cache",
            "-o", "APT::Architectures::=amd64", "-o", "APT::Architectures::=arm64"]


def _private_apt_update(cache: Path, suite: str, apt_state: dict) -> None:
    """Writes the suite's source list and fetches its package lists, at most once per process
    and only when they are older than APT_LISTS_MAX_AGE_S; offline, older lists are used."""
    if suite not in PRIVATE_SUITES:
        raise VmFailure(f"suite {suite!r} is not one the tier reads ({', '.join(PRIVATE_SUITES)})")
    key = ("updated", suite)
    if apt_state.get(key):
        return
    apt_state[key] = True
    d = private_apt_dir(cache, suite)
    for sub in ("sources", "prefs", "lists/partial", "cache/archives/partial"):
        (d / sub).mkdir(parents=True, exist_ok=True)
    (d / "sources" / "debian.sources").write_text(
        f"Types: deb\nURIs: {DEBIAN_MIRROR}\nSuites: {suite}\nComponents: main\n"
        f"Architectures: amd64 arm64\nSigned-By: {DEBIAN_KEYRING}\n")
    stamp = d / "lists" / ".hucvm-updated"
    if stamp.exists() and time.time() - stamp.stat().st_mtime < APT_LISTS_MAX_AGE_S:
        return
    if shutil.which("apt-get") is None:
        raise Skip("apt-get not available to read the Debian archive")
    log(f"apt: fetching the package lists of {suite} (private list in {d})")
    r = subprocess.run(["apt-get", *apt_options(cache, suite), "update", "-qq"],
                       capture_output=True, text=True)
    if r.returncode == 0:
        stamp.touch()
    else:
        log(f"apt: update of {suite} failed (rc={r.returncode}): {r.stderr.strip()[-300:]}; "
            "using the lists there are")


def _apt_depends(pkg: str, prefix: str, apt: list[str]) -> list[str]:
    """Packages named prefix* that `pkg` depends on (whatever the archive has today)."""
    try:
        out = subprocess.run(["apt-cache", *apt, "depends", pkg], capture_output=True,
                             text=True, check=False).stdout
    except FileNotFoundError:
        return []
    found = []
    for line in out.splitlines():
        m = re.match(r"\s*(?:\|)?Depends:\s*(" + re.escape(prefix) + r"\S+)", line)
        if m and not m.group(1).startswith("<") and m.group(1) not in found:
            found.append(m.group(1))
    return found


def _apt_depends_image(meta: str, apt: list[str] | None = None) -> str | None:
    """linux-image-amd64 -> linux-image-6.1.0-NN-amd64 (whatever the archive has today)."""
    found = _apt_depends(meta, "linux-image-", apt or [])
    return found[0] if found else None


def kernel_packages(image: str, apt: list[str] | None = None) -> list[str]:
    """The packages holding a kernel: the image package itself (up to 6.x: vmlinuz, config,
    modules), or, for Debian's split 7.x packages, the three its (nearly empty) image package
    depends on: linux-binary- (vmlinuz), linux-base- (config, System.map, modules.builtin) and
    linux-modules-<release>."""
    arch = image.rsplit(":", 1)[1] if ":" in image else None
    split = [p for prefix in ("linux-binary-", "linux-base-", "linux-modules-")
             for p in _apt_depends(image, prefix, apt or [])]
    pkgs = split or [image]
    return [p if arch is None or p.endswith(":" + arch) else f"{p}:{arch}" for p in pkgs]


def _apt_update_once(state: dict) -> None:
    if state.get("updated"):
        return
    state["updated"] = True
    if os.geteuid() != 0:
        log("apt-cache knows nothing and we are not root; cannot run apt-get update")
        return
    log("apt-cache knows nothing; running apt-get update once")
    subprocess.run(["apt-get", "update", "-qq"], check=False)


def resolve_kernel(label: str, meta: str, cache: Path, apt_state: dict,
                   suite: str | None = None) -> Kernel:
    """The kernel `meta` (linux-image-amd64, linux-image-arm64:arm64, ...) depends on today,
    downloaded and extracted into `cache` once: from the machine's own apt sources, or with
    `suite` one of PRIVATE_SUITES through a private apt list."""
    apt = apt_options(cache, suite)
    if suite is not None:
        _private_apt_update(cache, suite, apt_state)
    pkg = _apt_depends_image(meta, apt)
    if pkg is None and suite is None:
        _apt_update_once(apt_state)
        pkg = _apt_depends_image(meta, apt)
    resolved_online = pkg is not None
    stamp_name = ".hucvm-meta-" + meta.replace(":", "_") + (f"@{suite}" if suite else "")
    if pkg is None:
        # Offline: reuse the newest already-extracted package for this meta package, if any.
        stamps = sorted(cache.glob("linux-image-*/" + stamp_name),
                        key=lambda p: p.stat().st_mtime)
        if not stamps:
            raise Skip(f"cannot resolve {meta}{f' in {suite}' if suite else ''} with apt-cache "
                       f"and nothing cached under {cache}")
        pkg = stamps[-1].parent.name
        log(f"{meta}: apt-cache gave nothing, reusing cached {pkg}")
    dest = cache / pkg.replace(":", "_")
    done = dest / ".hucvm-complete"
    if not done.exists():
        fetch_and_extract(kernel_packages(pkg, apt), dest, apt)
        done.write_text(pkg + "\n")
    (dest / stamp_name).touch()
    if resolved_online:
        # The archive moved to a new ABI: drop older extracted packages of the same meta package.
        for stamp in cache.glob("linux-image-*/" + stamp_name):
            if stamp.parent != dest:
                log(f"pruning superseded {stamp.parent.name}")
                shutil.rmtree(stamp.parent, ignore_errors=True)
                old = cache / f"initramfs-{stamp.parent.name[len('linux-image-'):]}.cpio"
                old.unlink(missing_ok=True)
    releases = sorted({p.name[len("vmlinuz-"):] for p in (dest / "boot").glob("vmlinuz-*")}
                      | {p.parent.name for p in (dest / "usr/lib/modules").glob("*/vmlinuz")})
    if len(releases) != 1:
        raise VmFailure(f"{pkg}: expected exactly one vmlinuz in {dest} (boot/ or "
                        f"usr/lib/modules/*/), found {releases}")
    k = Kernel(label=label, meta_package=meta, package=pkg, root=dest, release=releases[0],
               suite=suite)
    log(f"kernel {label}: {meta}{f' ({suite})' if suite else ''} -> {pkg} (release {k.release}, "
        f"cached in {dest})")
    return k


def fetch_and_extract(pkgs: str | list[str], dest: Path, apt: list[str] | None = None) -> None:
    """apt-get download `pkgs` and unpack them all into `dest` (never installed)."""
    pkgs = [pkgs] if isinstance(pkgs, str) else pkgs
    if shutil.which("apt-get") is None or shutil.which("dpkg-deb") is None:
        raise Skip("apt-get/dpkg-deb not available to fetch kernel packages")
    dest.parent.mkdir(parents=True, exist_ok=True)  # first use of a fresh build tree
    tmp = Path(tempfile.mkdtemp(prefix="dl-", dir=dest.parent))
    try:
        # apt-get download drops privileges to _apt when it can write the directory as _apt;
        # a root-owned temp dir only produces a harmless warning.
        r = subprocess.run(["apt-get", *(apt or []), "download", "-q", *pkgs], cwd=tmp,
                           capture_output=True, text=True)
        debs = sorted(tmp.glob("*.deb"))
        if r.returncode != 0 or len(debs) != len(pkgs):
            raise Skip(f"apt-get download {' '.join(pkgs)} failed (rc={r.returncode}): "
                       f"{r.stderr.strip()}")
        if dest.exists():
            shutil.rmtree(dest)
        stage = tmp / "x"
        for deb in debs:
            subprocess.run(["dpkg-deb", "-x", str(deb), str(stage)], check=True)
        stage.rename(dest)
        log(f"downloaded and extracted {', '.join(d.name for d in debs)} "
            f"({sum(d.stat().st_size for d in debs) >> 20} MiB)")
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


# --------------------------------------------------------------------------------------------
# Modules: find, read their depends (modinfo), decompress, order
# --------------------------------------------------------------------------------------------

def _decompress(path: Path) -> bytes:
    data = path.read_bytes()
    if path.suffix == ".xz":
        return lzma.decompress(data)
    if path.suffix == ".zst":
        zstd = shutil.which("zstd")
        if not zstd:
            raise VmFailure(f"{path}: zstd-compressed module but no zstd binary on the host")
        return subprocess.run([zstd, "-dc", str(path)], check=True, capture_output=True).stdout
    if path.suffix == ".gz":
        import gzip
        return gzip.decompress(data)
    return data


def module_depends(path: Path) -> list[str]:
    """The modules `path` depends on, as kmod's modinfo reads them (it opens .ko.xz and .ko.zst
    itself)."""
    modinfo = shutil.which("modinfo") or "/sbin/modinfo"
    try:
        out = subprocess.run([modinfo, "-F", "depends", str(path)], check=True,
                             capture_output=True, text=True).stdout
    except FileNotFoundError:
        raise VmFailure("modinfo not found (scripts/install-deps.sh installs kmod)")
    except subprocess.CalledProcessError as e:
        raise VmFailure(f"modinfo -F depends {path} failed: {e.stderr.strip()}")
    return [d for line in out.splitlines() for d in line.strip().split(",") if d]


def _modname(path: Path) -> str:
    n = path.name
    for suf in (".xz", ".zst", ".gz"):
        if n.endswith(suf):
            n = n[: -len(suf)]
    return n[:-3].replace("-", "_")  # strip .ko


def resolve_modules(k: Kernel, wanted: list[str]) -> list[tuple[str, bytes]]:
    """Modules (name, uncompressed bytes) needed for `wanted`, dependencies first.

    Modules built into this kernel (modules.builtin) are silently satisfied; a wanted or
    depended-on module that is neither built in nor shipped is a failure.
    """
    builtin = set()
    bfile = k.moddir / "modules.builtin"
    if bfile.exists():
        for line in bfile.read_text().splitlines():
            builtin.add(_modname(Path(line.strip())))
    index: dict[str, Path] = {}
    for p in (k.moddir / "kernel").rglob("*.ko*"):
        index[_modname(p)] = p

    order: list[tuple[str, bytes]] = []
    seen: set[str] = set()

    def visit(name: str, chain: tuple[str, ...]):
        name = name.replace("-", "_")
        if name in seen:
            return
        if name in chain:
            raise VmFailure(f"module dependency cycle: {' -> '.join(chain + (name,))}")
        if name in builtin and name not in index:
            seen.add(name)
            return
        if name not in index:
            raise VmFailure(f"{k.package}: module {name} (needed by {' -> '.join(chain) or 'harness'})"
                            " is neither built in nor shipped")
        for dep in module_depends(index[name]):
            visit(dep, chain + (name,))
        seen.add(name)
        order.append((name, _decompress(index[name])))

    for w in wanted:
        visit(w, ())
    return order


# virtio-pci transport + 9p filesystem. On 6.1 virtio_pci does not list its *_dev helpers in
# depends= reliably across versions, so ask for them explicitly; built-ins are skipped.
GUEST_MODULES = ["virtio", "virtio_ring", "virtio_pci_legacy_dev", "virtio_pci_modern_dev",
                 "virtio_pci", "9pnet", "9pnet_virtio", "netfs", "9p"]


def optional_modules(k: Kernel, names: list[str]) -> list[str]:
    """`names` less the helper modules this kernel neither ships nor builds in (older/newer
    layouts); built-in ones stay (resolve_modules skips them)."""
    shipped = {_modname(p) for p in (k.moddir / "kernel").rglob("*.ko*")}
    builtin = set()
    bfile = k.moddir / "modules.builtin"
    if bfile.exists():
        builtin = {_modname(Path(line.strip())) for line in bfile.read_text().splitlines()}
    core = {"virtio", "virtio_ring", "virtio_pci", "9pnet", "9pnet_virtio", "9p"}
    return [n for n in names if n in core or n in shipped or n in builtin]


# --------------------------------------------------------------------------------------------
# initramfs (cpio newc, written directly so device nodes need no root)
# --------------------------------------------------------------------------------------------

class Cpio:
    def __init__(self):
        self.buf = bytearray()
        self.ino = 1

    def _entry(self, name: str, mode: int, data: bytes = b"", rdev=(0, 0), nlink=1):
        name_b = name.encode() + b"\0"
        hdr = "070701" + "".join(f"{v:08x}" for v in (
            self.ino, mode, 0, 0, nlink, 0, len(data), 0, 0, rdev[0], rdev[1], len(name_b), 0))
        self.ino += 1
        self.buf += hdr.encode() + name_b
        self.buf += b"\0" * ((4 - len(self.buf) % 4) % 4)
        self.buf += data
        self.buf += b"\0" * ((4 - len(self.buf) % 4) % 4)

    def dir(self, name):
        self._entry(name, 0o040755, nlink=2)

    def file(self, name, data: bytes, mode=0o755):
        self._entry(name, 0o100000 | mode, data)

    def symlink(self, name, target: str):
        self._entry(name, 0o120777, target.encode())

    def chardev(self, name, major, minor):
        self._entry(name, 0o020600, rdev=(major, minor))

    def finish(self) -> bytes:
        self._entry("TRAILER!!!", 0)
        return bytes(self.buf)


def find_busybox() -> Path:
    for cand in ("/bin/busybox", "/usr/bin/busybox"):
        p = Path(cand)
        if p.exists():
            out = subprocess.run(["file", "-L", str(p)], capture_output=True, text=True).stdout \
                if shutil.which("file") else "statically linked"
            if "statically linked" in out or "static-pie" in out:
                return p
    raise Skip("no static busybox (install busybox-static)")


# Where the initramfs carries files the guest /init installs into the host root's view, at the
# same path below it (guest/init.sh): the booted kernel's config, where its package installs it.
GUEST_KERNEL_FILES = "kernel-files"


def build_initramfs(k: Kernel, out: Path) -> list[str]:
    """Write `out` (if older than its inputs) and return the module load order."""
    return write_initramfs(out, GUEST_INIT, resolve_modules(k, optional_modules(k, GUEST_MODULES)),
                           [k.config], files={k.config_install_path: k.config.read_bytes()})


def write_initramfs(out: Path, init: Path, mods: list, extra_inputs: list[Path],
                    files: dict[str, bytes] | None = None) -> list[str]:
    """A busybox initramfs with `init` as /init and `mods` ([(name, bytes)], in load order) under
    /modules, and `files` ({absolute guest path: content}) under /kernel-files; rewritten only
    when older than its inputs. Returns the module names."""
    names = [n for n, _ in mods]
    busybox = find_busybox()
    inputs = [init, GUEST_PREAMBLE, busybox, Path(__file__), *extra_inputs]
    if out.exists() and all(out.stat().st_mtime >= p.stat().st_mtime for p in inputs):
        return names
    c = Cpio()
    for d in ("bin", "dev", "lib", "proc", "sys", "mnt", "mnt/host", "modules", "tmp"):
        c.dir(d)
    c.chardev("dev/console", 5, 1)
    c.chardev("dev/null", 1, 3)
    c.file("bin/busybox", busybox.read_bytes())
    c.symlink("bin/sh", "busybox")
    c.file("init", init.read_bytes())
    c.file("lib/hucvm-preamble.sh", GUEST_PREAMBLE.read_bytes(), 0o644)
    made = {""}
    for path, data in sorted((files or {}).items()):
        parts = [GUEST_KERNEL_FILES] + path.strip("/").split("/")
        for i in range(1, len(parts)):
            d = "/".join(parts[:i])
            if d not in made:
                c.dir(d)
                made.add(d)
        c.file("/".join(parts), data, 0o644)
    order = []
    for i, (n, data) in enumerate(mods):
        fn = f"{i:02d}-{n}.ko"
        c.file(f"modules/{fn}", data, 0o644)
        order.append(fn)
    c.file("modules/order", ("\n".join(order) + "\n").encode(), 0o644)
    tmp = out.with_suffix(".tmp")
    tmp.write_bytes(c.finish())
    tmp.rename(out)
    log(f"initramfs {out} ({out.stat().st_size >> 10} KiB), modules: {' '.join(names) or '(all built in)'}")
    return names


# --------------------------------------------------------------------------------------------
# QEMU
# --------------------------------------------------------------------------------------------

# Every guest boots so that a stuck CPU explains itself on the serial console, and the run ends
# then instead of at the hard timeout. A CPU that stops passing through RCU quiescent states
# (spinning with preemption or interrupts off, or waiting for one that does) is reported as an
# RCU stall after 60 s (rcu_cpu_stall_timeout), with the stalled CPUs' stacks, and panics
# (panic_on_rcu_stall); a soft lockup (watchdog_thresh=60: 120 s; an RCU stall report delays it)
# prints its stack and every other CPU's (softlockup_all_cpu_backtrace) and panics too. The panic
# prints every CPU's backtrace once more (panic_print=0x40), then panic=-1 and -no-reboot end
# qemu. loglevel=5 lets the backtraces through: they are printed at the default message level
# (4), which loglevel=4 hid. 60 s is far above what host load does to a healthy TCG guest (a vCPU
# thread descheduled for a minute), so a report is a real stall; console_triage judges it.
# sysrq_always_enabled: the hard timeout asks a hung guest for its stacks over the serial line.
LOCKUP_CMDLINE = ("loglevel=5 rcupdate.rcu_cpu_stall_timeout=60 sysctl.kernel.panic_on_rcu_stall=1 "
                  "watchdog_thresh=60 softlockup_panic=1 softlockup_all_cpu_backtrace=1 "
                  "panic_print=0x40 sysrq_always_enabled")
# How long the hard timeout waits for a hung guest's sysrq dump before killing qemu.
HANG_DUMP_S = 20
# The serial console on stdio through QEMU's multiplexer, whose escapes work on a pipe too:
# Ctrl-A b sends a serial break, and a key after a break is a magic sysrq: 9 = console loglevel
# 9 (so what follows is printed), l = backtrace of every active CPU, w = tasks in
# uninterruptible (D) state with their stacks.
SYSRQ_DUMP = [b"9", b"l", b"w"]
SERIAL_ON_STDIO = ["-nographic", "-monitor", "none", "-chardev", "stdio,id=con,mux=on,signal=off",
                   "-serial", "chardev:con"]

_accel_choice: accel.Choice | None = None


def _spawn(args: list[str]) -> subprocess.Popen:
    proc = subprocess.Popen(args, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                            stderr=subprocess.STDOUT, start_new_session=True)
    os.set_blocking(proc.stdout.fileno(), False)
    return proc


def _pump(proc: subprocess.Popen, sink, deadline: float, echo: bool = False,
          until: bytes | None = None, quiet_s: float | None = None) -> str:
    """Copy qemu's output to `sink` until qemu exits ("exited"), `until` appears ("marker"),
    `deadline` passes ("timeout") or nothing came for `quiet_s` seconds ("quiet")."""
    tail = b""
    last = time.monotonic()
    while True:
        chunk = proc.stdout.read(65536)
        if chunk:
            sink.write(chunk)
            sink.flush()
            last = time.monotonic()
            if echo:
                sys.stderr.buffer.write(chunk)
                sys.stderr.flush()
            if until is not None:
                tail = (tail + chunk)[-(len(until) + 65536):]
                if until in tail:
                    return "marker"
        elif proc.poll() is not None:
            sink.write(proc.stdout.read() or b"")
            return "exited"
        else:
            now = time.monotonic()
            if now > deadline:
                return "timeout"
            if quiet_s is not None and now - last > quiet_s:
                return "quiet"
            time.sleep(0.05)


def _kill(proc: subprocess.Popen) -> None:
    if proc.poll() is None:
        os.killpg(proc.pid, signal.SIGKILL)  # our own qemu's process group only
    proc.wait()


def _ask_for_stacks(proc: subprocess.Popen, sink, echo: bool) -> None:
    """A hung guest's every CPU's stack and blocked tasks onto the console (magic sysrq over
    the serial line), read for at most HANG_DUMP_S."""
    try:
        for key in SYSRQ_DUMP:
            proc.stdin.write(b"\x01b")
            proc.stdin.flush()
            time.sleep(0.5)
            proc.stdin.write(key)
            proc.stdin.flush()
            time.sleep(0.5)
    except OSError:
        return  # qemu went away meanwhile
    _pump(proc, sink, time.monotonic() + HANG_DUMP_S, echo=echo, quiet_s=3)


def probe_kvm_boot(qemu: str, k: Kernel) -> accel.ProbeResult:
    """Boot `k` with a marker-printing initramfs under -accel kvm, bounded by
    accel.PROBE_TIMEOUT_S; the console's last line (or qemu's error) says why when it fails."""
    initrd = k.cache_dir / "accel-probe.cpio"
    write_initramfs(initrd, ACCEL_PROBE_INIT, [], [])
    args = [qemu, *SERIAL_ON_STDIO, "-no-reboot", "-machine", "q35", "-accel", "kvm",
            "-cpu", "host", "-smp", "1", "-m", "256", "-nic", "none",
            "-kernel", str(k.vmlinuz), "-initrd", str(initrd),
            "-append", "console=ttyS0 panic=-1 loglevel=4 rdinit=/init"]
    out = io.BytesIO()
    t0 = time.monotonic()
    proc = _spawn(args)
    how = _pump(proc, out, t0 + accel.PROBE_TIMEOUT_S, until=accel.PROBE_MARKER.encode())
    seconds = time.monotonic() - t0
    _kill(proc)
    if how == "marker":
        return accel.ProbeResult(True, seconds, False, "")
    text = re.sub(r"\x1b\[[0-9;?]*[A-Za-z]|\x1bc", "", out.getvalue().decode(errors="replace"))
    lines = [ln.strip() for ln in text.splitlines() if ln.strip()]
    if how == "timeout":
        return accel.ProbeResult(False, seconds, True, f"its console ends with {lines[-1]!r}"
                                 if lines else "no console output")
    return accel.ProbeResult(False, seconds, False, f"qemu exited {proc.returncode}"
                             + (f": {lines[-1]}" if lines else ""))


def choose_accel(k: Kernel, device: Path = accel.KVM_DEVICE) -> accel.Choice:
    """accel.choose with this module's probe guest (`k`'s kernel)."""
    qemu = qemu_binary()
    try:
        return accel.choose(qemu, k.cache_dir, lambda: probe_kvm_boot(qemu, k), device)
    except accel.AccelError as e:
        raise VmFailure(str(e)) from None


def accelerator(k: Kernel) -> str:
    """The accelerator of every boot in this process: chosen once, logged once."""
    global _accel_choice
    if _accel_choice is None:
        _accel_choice = choose_accel(k)
        log(_accel_choice.line)
    return _accel_choice.accel


@dataclasses.dataclass
class RunResult:
    kernel: Kernel
    results_dir: Path
    console: str
    guest_rc: int | None
    accel: str               # "kvm" or "tcg"
    wall_s: float            # qemu start -> qemu exit
    boot_to_test_s: float | None  # guest uptime when the guest script started
    test_s: float | None     # guest script duration (guest clock)
    timed_out: bool

    def file(self, name: str) -> Path:
        return self.results_dir / name


def _tail(text: str, n=200) -> str:
    lines = text.splitlines()
    return "\n".join(lines[-n:])


class EmulatorFlake(VmFailure):
    """The guest kernel died of a known emulation artefact, not of anything under test."""


TCG_THREAD_ENV = "HUCVM_TCG_THREAD"


def tcg_thread_props() -> str:
    """-accel tcg properties for every guest: "thread=single" unless HUCVM_TCG_THREAD=multi.
    Multi-threaded TCG races with the kernel's cross-CPU text patching (ftrace sites rewritten
    at fentry/kprobe attach): 2 guest deaths in 684 site rewrites under it, 0 in 720
    single-threaded (bench/vm/attach_race.py)."""
    value = os.environ.get(TCG_THREAD_ENV, "single")
    if value not in ("single", "multi"):
        raise VmFailure(f"{TCG_THREAD_ENV}={value!r}: expected single or multi")
    return f"thread={value}"


def run_vm(k: Kernel, initrd: Path, script: Path, results_dir: Path, **kwargs) -> RunResult:
    """_run_vm_once, booted a second time after a known emulator artefact (console_triage: said
    loudly, and the first console kept next to the results as *.flake-console.log); any other
    failure is final."""
    try:
        return _run_vm_once(k, initrd, script, results_dir, **kwargs)
    except EmulatorFlake as e:
        first = results_dir.parent / (results_dir.name + ".console.log")
        kept = results_dir.parent / (results_dir.name + ".flake-console.log")
        if first.exists():
            first.replace(kept)
        log(f"RETRY {k.label} {results_dir.name}: {str(e).splitlines()[0]}; first console in "
            f"{kept}")
        return _run_vm_once(k, initrd, script, results_dir, **kwargs)


def _run_vm_once(k: Kernel, initrd: Path, script: Path, results_dir: Path, *,
                 extra_cmdline: str = "", env: dict[str, str] | None = None,
                 timeout_s: float = 420, cpus: int = 2, mem_mib: int = 1536,
                 qemu_args: list[str] | tuple[str, ...] = (), tcg_props: str | None = None,
                 echo_console: bool = False) -> RunResult:
    """Boot `k`, run `script` (an absolute host path, executed in the guest chroot), return.
    `qemu_args` are appended to qemu's command line (e.g. ["-icount", "shift=1,sleep=off"]);
    `tcg_props` to `-accel tcg` when the accelerator is TCG (e.g. "thread=single": one host
    thread runs every vCPU; a second -accel would only be a fallback, so it cannot go in
    qemu_args). By default every TCG guest runs single-threaded (tcg_thread_props(): multi-
    threaded TCG left stray int3s at ftrace sites being patched, which killed guests at fentry
    attach; tests/vm/README.md "A NULL RIP at attach").

    Raises VmFailure for boot failures, missing rc, timeout, or a lockup with BPF on its stacks;
    the console log (or the report's stacks) is included. A non-zero guest rc is *returned*
    (callers decide), not raised.
    """
    qemu = qemu_binary()
    script = script.resolve()
    results_dir = results_dir.resolve()
    if results_dir.exists():
        shutil.rmtree(results_dir)
    results_dir.mkdir(parents=True)
    # Guest environment travels as a file in the results dir (kernel cmdline is size-limited
    # and mangles quoting).
    env = dict(env or {})
    env.setdefault("HUCVM_KERNEL", k.label)
    env.setdefault("HUCVM_RELEASE", k.release)
    with open(results_dir / ".hucvm-env", "w") as f:
        for key, val in env.items():
            if not re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", key):
                raise ValueError(f"bad env name {key!r}")
            f.write(f"export {key}='" + val.replace("'", "'\\''") + "'\n")
    for p in (script, results_dir):
        if " " in str(p):
            raise ValueError(f"path with spaces not supported on the kernel cmdline: {p}")

    cmdline = (f"console=ttyS0 panic=-1 {LOCKUP_CMDLINE} rdinit=/init "
               f"hucvm.script={script} hucvm.results={results_dir} {extra_cmdline}").strip()
    acc = accelerator(k)
    if tcg_props is None:
        tcg_props = tcg_thread_props()
    accel_arg = f"{acc},{tcg_props}" if tcg_props and acc == "tcg" else acc
    args = [qemu, *SERIAL_ON_STDIO, "-no-reboot",
            "-machine", "q35", "-accel", accel_arg, "-cpu", "host" if acc == "kvm" else "max",
            "-smp", str(cpus), "-m", str(mem_mib), "-nic", "none",
            "-kernel", str(k.vmlinuz), "-initrd", str(initrd), "-append", cmdline,
            "-virtfs", "local,path=/,mount_tag=hostroot,security_model=none,readonly=on,"
                       "multidevs=remap",
            "-virtfs", f"local,path={results_dir},mount_tag=results,security_model=none,"
                       "multidevs=remap", *qemu_args]
    log(f"boot {k.label} ({k.release}, {accel_arg}, {cpus} vCPU, {mem_mib} MiB): {script.name}"
        + (f" [{extra_cmdline}]" if extra_cmdline else "")
        + (f" qemu {' '.join(qemu_args)}" if qemu_args else ""))
    console_path = results_dir.parent / (results_dir.name + ".console.log")
    t0 = time.monotonic()
    with open(console_path, "wb") as con:
        proc = _spawn(args)
        timed_out = _pump(proc, con, t0 + timeout_s, echo=echo_console) == "timeout"
        if timed_out:
            _ask_for_stacks(proc, con, echo_console)
        _kill(proc)
    wall = time.monotonic() - t0
    console = console_path.read_text(errors="replace")
    rc_file = results_dir / ".hucvm-rc"
    rc = int(rc_file.read_text().strip()) if rc_file.exists() else None

    def guest_float(name):
        p = results_dir / name
        try:
            return float(p.read_text().split()[0])
        except (OSError, ValueError, IndexError):
            return None

    start_up = guest_float(".hucvm-start-uptime")
    end_up = guest_float(".hucvm-end-uptime")
    res = RunResult(kernel=k, results_dir=results_dir, console=console, guest_rc=rc, accel=acc,
                    wall_s=wall, boot_to_test_s=start_up,
                    test_s=(end_up - start_up) if start_up is not None and end_up else None,
                    timed_out=timed_out)
    verdict = console_triage.triage(console)
    action = console_triage.outcome(verdict, finished=rc is not None)
    report = (f"--- {verdict.kind} report ({console_path}) ---\n{verdict.evidence}" if verdict
              else f"--- console ({console_path}) ---\n{_tail(console)}")
    if action == "retry":
        raise EmulatorFlake(f"{k.label}: {verdict.summary}\n{report}")
    if timed_out:
        raise VmFailure(f"{k.label}: guest hung: no poweroff within {timeout_s:.0f}s; "
                        + (verdict.summary if verdict else "stacks asked for by sysrq")
                        + f"\n{report}")
    if rc is None:
        why = re.findall(r"HUCVM-FAIL: .*", console)
        raise VmFailure(f"{k.label}: guest never reported an exit status "
                        f"(qemu rc={proc.returncode}; "
                        f"{verdict.summary if verdict else why[-1] if why else 'boot failure?'})"
                        f"\n{report}")
    if action == "fail":
        raise VmFailure(f"{k.label}: the guest finished (rc={rc}) but reported {verdict.summary}"
                        f"\n{report}")
    if action == "warn":
        log(f"WARNING {k.label} {results_dir.name}: the guest reported {verdict.summary}, and "
            f"finished anyway (rc={rc}); console in {console_path}")
    return res


def format_console(res: RunResult, n=200) -> str:
    return f"--- console {res.kernel.label} ---\n{_tail(res.console, n)}"


# --------------------------------------------------------------------------------------------
# Host helpers
# --------------------------------------------------------------------------------------------

def compile_c(src: Path, out: Path, cflags=("-O2", "-Wall", "-Wextra", "-Werror"),
              libs=()) -> Path:
    """`out` built from `src` unless it is newer; `libs` ("-lbpf") go after the source, where the
    linker looks for what it uses."""
    if out.exists() and out.stat().st_mtime >= src.stat().st_mtime:
        return out
    cc = os.environ.get("CC", "cc")
    if shutil.which(cc) is None:
        raise Skip(f"no C compiler ({cc}) to build guest workloads")
    out.parent.mkdir(parents=True, exist_ok=True)
    subprocess.run([cc, *cflags, "-o", str(out), str(src), *libs], check=True)
    return out
