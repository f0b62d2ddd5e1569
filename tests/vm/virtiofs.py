"""Sharing host directories with a guest over virtiofs, for kernels built without 9p (Debian's
cloud flavour): one virtiofsd per share, started before qemu and stopped after it, and the QEMU
arguments that connect them (vhost-user needs the guest's memory shared with the daemons)."""

from __future__ import annotations

import shutil
import subprocess
import tempfile
import time
from pathlib import Path

from vmlib import Skip, VmFailure

# How long a virtiofsd may take to create its socket.
START_TIMEOUT_S = 20
MEMORY_ID = "hucvm-mem"

# The C virtiofsd (QEMU's, up to 7.2) exports everything writable: a read-only share is served
# from a read-only bind mount of it, made in a mount namespace of the daemon's own (the host's
# mounts are not touched). "$1" the source, "$2" the mount point, then the daemon's command.
_READ_ONLY_WRAPPER = ('mount --rbind "$1" "$2" && mount -o remount,bind,ro "$2" '
                      '&& shift 2 && exec "$@"')


def daemon_binary() -> str:
    """The vhost-user daemon behind a virtiofs share (QEMU's own up to 7.2, the Rust one after)."""
    for cand in (shutil.which("virtiofsd"), "/usr/libexec/virtiofsd", "/usr/lib/qemu/virtiofsd"):
        if cand and Path(cand).exists():
            return cand
    raise Skip("no virtiofsd (a kernel without 9p shares the host's root over virtiofs)")


def daemon_command(daemon: str, socket: Path, source: Path, cache: str,
                   read_only_at: Path | None = None) -> list[str]:
    """virtiofsd serving `source` on `socket`; with `read_only_at` (an empty directory), served
    from a read-only bind mount of `source` there, in a private mount namespace."""
    served = read_only_at if read_only_at is not None else source
    cmd = [daemon, f"--socket-path={socket}", "-o", f"source={served}", "-o", f"cache={cache}",
           "-o", "log_level=warn"]
    if read_only_at is None:
        return cmd
    return ["unshare", "--mount", "--propagation", "private", "sh", "-c", _READ_ONLY_WRAPPER,
            "hucvm-virtiofs-ro", str(source), str(read_only_at), *cmd]


def qemu_args(sockets: dict[str, Path], mem_mib: int) -> list[str]:
    """QEMU arguments for one vhost-user-fs device per (tag, socket), and the guest's memory
    (`mem_mib`, as -m says) as a shared memfd, which vhost-user requires."""
    args = ["-object", f"memory-backend-memfd,id={MEMORY_ID},size={mem_mib}M,share=on",
            "-numa", f"node,memdev={MEMORY_ID}"]
    for tag, sock in sockets.items():
        args += ["-chardev", f"socket,id=vfs-{tag},path={sock}",
                 "-device", f"vhost-user-fs-pci,chardev=vfs-{tag},tag={tag}"]
    return args


class Shares:
    """The daemons of `shares` (tag -> (directory, read-only?)), running from __enter__ to
    __exit__; `args` are qemu's (none for no shares). Sockets and read-only mount points live in
    a private temporary directory (a UNIX socket's path must stay short)."""

    def __init__(self, shares: dict[str, tuple[Path, bool]], mem_mib: int):
        self.shares = shares
        self.mem_mib = mem_mib
        self.procs: list[subprocess.Popen] = []
        self.tmp: Path | None = None
        self.args: list[str] = []

    def __enter__(self) -> "Shares":
        if not self.shares:
            return self
        daemon = daemon_binary()
        self.tmp = Path(tempfile.mkdtemp(prefix="hucvm-vfs-"))
        sockets = {}
        try:
            for tag, (path, read_only) in self.shares.items():
                sock = self.tmp / f"{tag}.sock"
                ro_at = None
                if read_only:
                    ro_at = self.tmp / f"{tag}.ro"
                    ro_at.mkdir()
                # Every FUSE request is a round trip through qemu: a read-only share does not
                # change under the guest, so its attributes and entries are kept (always) rather
                # than looked up again every second (auto, for the share the guest writes).
                self.procs.append(subprocess.Popen(
                    daemon_command(daemon, sock, path, "always" if read_only else "auto",
                                   ro_at), stdin=subprocess.DEVNULL))
                self._wait_for(sock, self.procs[-1], path)
                sockets[tag] = sock
        except BaseException:
            self.__exit__(None, None, None)
            raise
        self.args = qemu_args(sockets, self.mem_mib)
        return self

    @staticmethod
    def _wait_for(sock: Path, proc: subprocess.Popen, path: Path) -> None:
        deadline = time.monotonic() + START_TIMEOUT_S
        while not sock.exists():
            if proc.poll() is not None:
                raise VmFailure(f"virtiofsd for {path} exited with {proc.returncode} before "
                                "creating its socket")
            if time.monotonic() > deadline:
                raise VmFailure(f"virtiofsd for {path} made no socket in {START_TIMEOUT_S} s")
            time.sleep(0.1)

    def __exit__(self, *exc) -> None:
        for p in self.procs:
            if p.poll() is None:
                p.terminate()
                try:
                    p.wait(timeout=10)
                except subprocess.TimeoutExpired:
                    p.kill()
                    p.wait()
        self.procs = []
        if self.tmp is not None:
            # Never a recursive delete: a read-only mount point is an empty directory here (its
            # mount lived in the daemon's namespace), but nothing here should walk into one.
            for entry in self.tmp.iterdir():
                if entry.is_dir() and not entry.is_symlink():
                    entry.rmdir()
                else:
                    entry.unlink()
            self.tmp.rmdir()
            self.tmp = None
