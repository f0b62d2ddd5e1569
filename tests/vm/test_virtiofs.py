#!/usr/bin/env python3
"""The virtiofs shares of guests whose kernel has no 9p (virtiofs.py), without booting a guest
(~5 s, root):

- a read-only share is read-only for its daemon: a stand-in daemon started by
  virtiofs.daemon_command tries to create a file in the directory it was told to serve, and the
  kernel refuses it (EROFS), while the same command without read_only_at succeeds; the host's
  mount table is the same before and after;
- QEMU accepts the arguments virtiofs.qemu_args builds and completes the vhost-user handshake
  with the real virtiofsd that virtiofs.Shares starts (qemu realises each vhost-user-fs device at
  start-up and exits with an error when a daemon does not answer): qemu starts paused and quits
  on its monitor's `quit`, exit 0.

Usage: test_virtiofs.py          Exit: 0 pass, 1 fail, 77 skip (not root, or no unshare, qemu or
virtiofsd).
"""

import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

sys.dont_write_bytecode = True  # keep the source tree clean
HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

import virtiofs  # noqa: E402
from vmlib import Skip  # noqa: E402

# Stands in for virtiofsd: creates its socket path (as a plain file, which is all Shares waits
# for) and tries to create a file in the directory given as -o source=.
FAKE_DAEMON = r'''#!/usr/bin/env python3
import errno, sys
args = sys.argv[1:]
sock = next(a.split("=", 1)[1] for a in args if a.startswith("--socket-path="))
src = next(args[i + 1].split("=", 1)[1] for i, a in enumerate(args)
           if a == "-o" and args[i + 1].startswith("source="))
try:
    open(src + "/written-by-daemon", "w").close()
    verdict = "written"
except OSError as e:
    verdict = errno.errorcode.get(e.errno, str(e.errno))
open(sock + ".verdict", "w").write(verdict)
'''


def mounts() -> list[str]:
    return sorted(line.split(" - ")[0].split(" ", 4)[4]
                  for line in Path("/proc/self/mountinfo").read_text().splitlines())


def fake_daemon_verdict(fake: Path, work: Path, read_only: bool) -> str:
    served = work / "served"
    served.mkdir()
    ro_at = None
    if read_only:
        ro_at = work / "ro"
        ro_at.mkdir()
    sock = work / "s.sock"
    r = subprocess.run(virtiofs.daemon_command(str(fake), sock, served, "auto", ro_at),
                       capture_output=True, text=True, timeout=60)
    if r.returncode != 0:
        return f"rc {r.returncode}: {r.stderr.strip()}"
    verdict = (work / "s.sock.verdict").read_text()
    if read_only and (served / "written-by-daemon").exists():
        return f"{verdict}, but the served directory got the file"
    return verdict


def check_read_only(tmp: Path) -> list[str]:
    fails = []
    fake = tmp / "fake-virtiofsd"
    fake.write_text(FAKE_DAEMON)
    fake.chmod(0o755)
    before = mounts()
    for read_only, want in ((True, "EROFS"), (False, "written")):
        work = tmp / f"ro-{read_only}"
        work.mkdir()
        got = fake_daemon_verdict(fake, work, read_only)
        print(f"read_only={read_only}: the daemon's write into its source: {got} (want {want})")
        if got != want:
            fails.append(f"read_only={read_only}: {got}, want {want}")
    if mounts() != before:
        fails.append("the host's mount table changed")
    return fails


def check_qemu_handshake(tmp: Path) -> list[str]:
    qemu = shutil.which("qemu-system-x86_64")
    if qemu is None:
        raise Skip("qemu-system-x86_64 not installed")
    (tmp / "root").mkdir()
    (tmp / "results").mkdir()
    mem = 64
    shares = {"hostroot": (tmp / "root", True), "results": (tmp / "results", False)}
    with virtiofs.Shares(shares, mem) as s:
        args = [qemu, "-machine", "q35", "-accel", "tcg", "-m", str(mem), "-nodefaults",
                "-display", "none", "-monitor", "stdio", "-S", *s.args]
        r = subprocess.run(args, input="quit\n", capture_output=True, text=True, timeout=120)
    print(f"qemu with {' '.join(s.args)}: rc {r.returncode}")
    if r.returncode != 0 or "error" in r.stderr.lower():
        return [f"qemu rc {r.returncode}: {r.stderr.strip()[-500:]}"]
    return []


def main() -> int:
    try:
        if os.geteuid() != 0:
            raise Skip("needs root (virtiofsd's namespaces, the read-only bind mount)")
        if shutil.which("unshare") is None:
            raise Skip("no unshare")
        with tempfile.TemporaryDirectory(prefix="hucvm-vfs-test-") as d:
            fails = check_read_only(Path(d))
            fails += check_qemu_handshake(Path(d))
    except Skip as e:
        print(f"SKIP: {e}")
        return 77
    for f in fails:
        print(f"FAIL: {f}")
    print("PASS" if not fails else f"{len(fails)} failure(s)")
    return 1 if fails else 0


if __name__ == "__main__":
    sys.exit(main())
