"""A Debian kernel for a guest: the image package the meta package depends on today, from the
machine's own apt sources or a private apt list per suite, downloaded and unpacked once into the
run's vm-cache (never installed)."""

from __future__ import annotations

import dataclasses
import os
import re
import shutil
import subprocess
import tempfile
import time
from pathlib import Path

from vmlib import Skip, VmFailure, log


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

# Debian suites the machine's own apt does not list (its release's are bookworm and its updates;
# bullseye is the one before)
# are read through a private apt configuration per suite, under the run's vm-cache: its own
# source list, package lists and download cache; the machine's apt configuration is never read
# for them (no sources.list, no preferences) and never changed.
PRIVATE_SUITES = ("bullseye", "trixie", "trixie-backports", "sid")
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


