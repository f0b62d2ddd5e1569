"""The guest's initramfs: a static busybox, the guest /init, and the kernel modules the guest
needs (found in the kernel's package, their depends read by kmod's modinfo, decompressed, in load
order), written as a cpio archive directly so device nodes need no root."""

from __future__ import annotations

import gzip
import lzma
import shutil
import subprocess
from pathlib import Path

from kernel_packages import Kernel
from vmlib import Skip, VmFailure, log

HERE = Path(__file__).resolve().parent
GUEST_INIT = HERE / "guest" / "init.sh"
# Sourced by every guest /init (this tier's and vm_systemd's), so it is in every initramfs.
GUEST_PREAMBLE = HERE / "guest" / "preamble.sh"


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
# Kernels without 9p (Debian's cloud flavour) share the host's root over virtiofs instead.
VIRTIOFS_MODULES = ["virtio", "virtio_ring", "virtio_pci_legacy_dev", "virtio_pci_modern_dev",
                    "virtio_pci", "fuse", "virtiofs"]
CORE_MODULES = {"9p": {"virtio", "virtio_ring", "virtio_pci", "9pnet", "9pnet_virtio", "9p"},
                "virtiofs": {"virtio", "virtio_ring", "virtio_pci", "fuse", "virtiofs"}}


def share_of(k: Kernel) -> str:
    """How the guest sees the host's root: "9p" where the kernel has it (built in or a module),
    else "virtiofs"; VmFailure when it has neither."""
    def has(opt):
        return k.config_value(opt) in ("y", "m")
    if has("CONFIG_9P_FS") and has("CONFIG_NET_9P_VIRTIO"):
        return "9p"
    if has("CONFIG_VIRTIO_FS"):
        return "virtiofs"
    raise VmFailure(f"{k.package}: neither 9p (CONFIG_9P_FS, CONFIG_NET_9P_VIRTIO) nor virtiofs "
                    "(CONFIG_VIRTIO_FS): the guest cannot see the host's root")


def optional_modules(k: Kernel, names: list[str], share: str = "9p") -> list[str]:
    """`names` less the helper modules this kernel neither ships nor builds in (older/newer
    layouts); built-in ones stay (resolve_modules skips them). The share's own modules must be
    there."""
    shipped = {_modname(p) for p in (k.moddir / "kernel").rglob("*.ko*")}
    builtin = set()
    bfile = k.moddir / "modules.builtin"
    if bfile.exists():
        builtin = {_modname(Path(line.strip())) for line in bfile.read_text().splitlines()}
    core = CORE_MODULES[share]
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
    share = share_of(k)
    wanted = GUEST_MODULES if share == "9p" else VIRTIOFS_MODULES
    return write_initramfs(out, GUEST_INIT, resolve_modules(k, optional_modules(k, wanted, share)),
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


