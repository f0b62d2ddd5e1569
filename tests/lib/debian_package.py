"""The Debian package of a build tree, built once for the tests that need it (package_deb,
vm_systemd): scripts/build-deb.sh --reuse BUILD_DIR (dpkg-buildpackage, debhelper, the tree's
own binary) into BUILD_DIR/deb/, rebuilt only when the binary or anything the package is made
of is newer than the .deb."""

import shutil
import subprocess
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]


class PackageError(RuntimeError):
    pass


def package_inputs(hucprof: Path) -> list[Path]:
    return [hucprof, REPO / "cmake" / "Packaging.cmake", REPO / "scripts" / "build-deb.sh",
            REPO / "README.md", *(REPO / "deploy").rglob("*"), *(REPO / "debian").rglob("*"),
            *(REPO / "dashboards").glob("*"), *(REPO / "docs" / "man").glob("*")]


def ensure_deb(build: Path, hucprof: Path, log=print) -> Path:
    if not hucprof.is_file():
        raise PackageError(f"hucprof is not built ({hucprof}); build the tree first")
    for tool, pkg in (("dpkg-buildpackage", "dpkg-dev"), ("dh", "debhelper")):
        if shutil.which(tool) is None:
            raise PackageError(f"{tool} not installed ({pkg}: scripts/install-deps.sh)")
    out = build / "deb"
    debs = sorted(out.glob("hucprof_*.deb"))
    newest = max(p.stat().st_mtime for p in package_inputs(hucprof) if p.is_file())
    if len(debs) == 1 and debs[0].stat().st_mtime >= newest:
        log(f"package {debs[0]} is up to date")
        return debs[0]
    shutil.rmtree(out, ignore_errors=True)
    log(f"scripts/build-deb.sh --reuse {build} --out {out}")
    t = time.monotonic()
    r = subprocess.run([str(REPO / "scripts" / "build-deb.sh"), "--reuse", str(build),
                        "--out", str(out)], capture_output=True, text=True, timeout=1200)
    debs = sorted(out.glob("hucprof_*.deb"))
    if r.returncode != 0 or len(debs) != 1:
        raise PackageError(f"scripts/build-deb.sh failed (rc={r.returncode}):\n"
                           f"{(r.stdout + r.stderr)[-3000:]}")
    shutil.rmtree(out / "src", ignore_errors=True)
    log(f"built {debs[0].name} ({debs[0].stat().st_size >> 10} KiB) in "
        f"{time.monotonic() - t:.0f} s")
    return debs[0]
