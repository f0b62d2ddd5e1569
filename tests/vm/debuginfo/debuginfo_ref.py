"""What the debuginfo tests compare hucprof with, shared by the x86 VM test (debuginfo_vm.py)
and the arm64 guest's check (tests/vm/arm64/debuginfo_check.py): Debian's -dbg package unpacked
once, binutils' addr2line and nm on the debuginfo, Google's pprof on hucprof's profiles."""

from __future__ import annotations

import dataclasses
import re
import shutil
import subprocess
import tarfile
import tempfile
import time
from pathlib import Path

from vmlib import Skip, VmFailure, log

# Functions that only check on the way to the copy: the copy is the first function above them
# (the rule hucprof documents in docs/design.md, applied here to addr2line's chains).
CHECK_WRAPPERS = {"check_object_size", "check_copy_size", "__check_object_size"}


def fetch_debuginfo(release: str, cache: Path, modules: list[str], arch: str | None = None,
                    apt: list[str] | None = None) -> Path:
    """CACHE/debuginfo/RELEASE, laid out like Debian's linux-image-RELEASE-dbg (of `arch` when
    given; usr/lib/debug/boot/vmlinux-R and the `modules`, paths below
    usr/lib/debug/lib/modules/R/), unpacked once per build directory: only those files are taken
    out of the ~1 GB package, which is deleted."""
    dest = cache / "debuginfo" / release
    done = dest / ".complete"
    if done.exists():
        return dest
    pkg = f"linux-image-{release}-dbg" + (f":{arch}" if arch else "")
    wanted = {f"usr/lib/debug/boot/vmlinux-{release}"} | {
        f"usr/lib/debug/lib/modules/{release}/{p}" for p in modules}
    tmp = Path(tempfile.mkdtemp(prefix="dbg-", dir=cache))
    try:
        t0 = time.monotonic()
        r = subprocess.run(["apt-get", *(apt or []), "download", "-q", pkg], cwd=tmp,
                           capture_output=True, text=True)
        debs = list(tmp.glob("*.deb"))
        if r.returncode != 0 or len(debs) != 1:
            raise Skip(f"apt-get download {pkg} failed (rc={r.returncode}): {r.stderr.strip()}")
        t1 = time.monotonic()
        log(f"downloaded {debs[0].name} ({debs[0].stat().st_size >> 20} MiB) in {t1 - t0:.0f} s")
        stage = tmp / "x"
        # One pass over the package's data, stopped once the wanted files are out: vmlinux comes
        # early in Debian's archive, and the 5 GB of module debuginfo need not be unpacked.
        proc = subprocess.Popen(["dpkg-deb", "--fsys-tarfile", str(debs[0])],
                                stdout=subprocess.PIPE)
        left = set(wanted)
        with tarfile.open(fileobj=proc.stdout, mode="r|") as tar:
            for member in tar:
                name = member.name.lstrip("./")
                if name in left and member.isfile():
                    tar.extract(member, stage, set_attrs=False)
                    left.discard(name)
                    if not left:
                        break
        proc.kill()
        proc.wait()
        if left:
            raise VmFailure(f"{pkg} lacks {sorted(left)}")
        log(f"unpacked vmlinux and {len(modules)} modules of {pkg} in "
            f"{time.monotonic() - t1:.0f} s")
        if dest.exists():
            shutil.rmtree(dest)
        dest.parent.mkdir(parents=True, exist_ok=True)
        stage.rename(dest)
        done.write_text(pkg + "\n")
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return dest


class Symbols:
    """nm of a debuginfo file: symbol -> value (section-relative in a module)."""

    def __init__(self, path: Path):
        out = subprocess.run(["nm", str(path)], capture_output=True, text=True,
                             check=True).stdout
        self.values: dict[str, int] = {}
        for line in out.splitlines():
            parts = line.split()
            if len(parts) == 3 and parts[1] in "tTwW":
                self.values.setdefault(parts[2], int(parts[0], 16))


class Addr2line:
    """binutils' `addr2line -i -f -a`, one process per file answering address after address on
    its stdin: it reads a 633 MB vmlinux's DWARF once (seconds), not once per frame asked."""

    # Outside every file's text: answered "??", it marks where the previous answer ended.
    SENTINEL = 0xffffffffffffff00

    def __init__(self, tool: str = "addr2line"):
        self.tool = tool
        self.procs: dict[tuple, subprocess.Popen] = {}
        self.answers: dict[tuple, list[tuple]] = {}

    def chain(self, path: Path, addr: int, section: str | None = None) -> list[tuple]:
        """The inline chain at addr, innermost first, as (function, file, line)."""
        key = (str(path), section)
        if (key, addr) in self.answers:
            return self.answers[(key, addr)]
        proc = self.procs.get(key)
        if proc is None:
            cmd = [self.tool, "-i", "-f", "-a", "-e", str(path)] + (
                ["-j", section] if section else [])
            proc = self.procs[key] = subprocess.Popen(cmd, stdin=subprocess.PIPE,
                                                      stdout=subprocess.PIPE, text=True)
        proc.stdin.write(f"0x{addr:x}\n0x{self.SENTINEL:x}\n")
        proc.stdin.flush()
        if not proc.stdout.readline().startswith("0x"):
            raise ValueError(f"{self.tool} -e {path.name}: no answer for 0x{addr:x}")
        sentinel = f"0x{self.SENTINEL:016x}"
        chain: list[tuple] = []
        while (function := proc.stdout.readline().rstrip("\n")) != sentinel:
            if not function:
                raise ValueError(f"{self.tool} -e {path.name} ended at 0x{addr:x}")
            where = re.sub(r" \(discriminator \d+\)$", "", proc.stdout.readline().rstrip("\n"))
            file, _, line = where.rpartition(":")
            chain.append((function, file, int(line) if line.isdigit() else 0))
        proc.stdout.readline()
        proc.stdout.readline()  # the sentinel's "??" and "??:0"
        self.answers[(key, addr)] = chain
        return chain

    def close(self) -> None:
        for proc in self.procs.values():
            proc.stdin.close()
            proc.wait()
        self.procs.clear()


def same_chain(hucprof: list[tuple], reference: list[tuple]) -> bool:
    """Functions and lines equal; addr2line's file is the build machine's path, hucprof's the
    part below the build directory, so the reference's must end with hucprof's."""
    if len(hucprof) != len(reference):
        return False
    for i, ((hf, hfile, hline), (rf, rfile, rline)) in enumerate(zip(hucprof, reference)):
        # The frame's own function (last) keeps its kallsyms name, which is the DWARF name
        # with GCC's clone suffix when it was cloned (getname_flags.part.0, copy_strings.isra.0).
        own = i == len(reference) - 1
        if not (hf == rf or (own and hf.startswith(rf + "."))) or hline != rline or not hfile:
            return False
        if not (rfile == hfile or rfile.endswith("/" + hfile)):
            return False
    return True


def chain_text(chain: list[tuple]) -> str:
    return " <- ".join(f"{f} {file.rsplit('/', 1)[-1]}:{line}" for f, file, line in chain)


def copy_of(chain: list[tuple]) -> str:
    for f, _, _ in chain:
        if f not in CHECK_WRAPPERS:
            return f
    return ""


@dataclasses.dataclass
class Location:
    address: int
    mapping: str
    lines: list[tuple]  # (function, file, line), innermost first


@dataclasses.dataclass
class Sample:
    values: dict[str, int]
    locations: list[int]  # leaf first
    labels: dict[str, str]


PPROF_RAW: dict[Path, tuple] = {}


def pprof_raw(pprof: Path, profile: Path) -> tuple[list[Sample], dict[int, Location]]:
    """A profile as Google's pprof reads it (`pprof -raw`), read once."""
    if profile not in PPROF_RAW:
        PPROF_RAW[profile] = read_pprof_raw(pprof, profile)
    return PPROF_RAW[profile]


def read_pprof_raw(pprof: Path, profile: Path) -> tuple[list[Sample], dict[int, Location]]:
    r = subprocess.run([str(pprof), "-raw", str(profile)], capture_output=True, text=True,
                       timeout=120)
    if r.returncode != 0:
        raise ValueError(f"pprof -raw {profile.name}: {r.stderr.strip()}")
    text = r.stdout
    sample_part = text.split("Samples:\n", 1)[1].split("\nLocations", 1)[0].splitlines()
    types = [t.replace("[dflt]", "").split("/")[0] for t in sample_part[0].split()]
    samples: list[Sample] = []
    for line in sample_part[1:]:
        m = re.match(r"^\s*((?:\d+\s+)*\d+):((?:\s+\d+)*)\s*$", line)
        if m:
            values = [int(v) for v in m.group(1).split()]
            samples.append(Sample(dict(zip(types, values)), [int(x) for x in m.group(2).split()],
                                  {}))
            continue
        for key, value in re.findall(r"(\w+):\[([^\]]*)\]", line):
            if samples:
                samples[-1].labels[key] = value
    mappings = {}
    for m in re.finditer(r"(?m)^\s*(\d+): 0x[0-9a-f]+/0x[0-9a-f]+/0x[0-9a-f]+ (\S+)",
                         text.split("\nMappings", 1)[-1]):
        mappings[int(m.group(1))] = m.group(2)
    locations: dict[int, Location] = {}
    loc_part = text.split("\nLocations\n", 1)[1].split("\nMappings", 1)[0].splitlines()
    current = None
    for line in loc_part:
        m = re.match(r"^\s*(\d+): 0x([0-9a-f]+) M=(\d+) (.*)$", line)
        rest = None
        if m:
            current = Location(int(m.group(2), 16), m.group(3), [])
            locations[int(m.group(1))] = current
            rest = m.group(4)
        elif current is not None and line.startswith(" " * 13):
            rest = line.strip()
        if rest:
            fm = re.match(r"^(\S+) (\S*):(\d+) s=\d+", rest)
            if fm:
                current.lines.append((fm.group(1), fm.group(2), int(fm.group(3))))
    for loc in locations.values():
        loc.mapping = mappings.get(int(loc.mapping), loc.mapping)
    return samples, locations


def caller_to_site(sample: Sample, locs: dict[int, Location]) -> list[Location]:
    """The profile stack's frames from the check's caller up to the call site."""
    frames = [locs[i] for i in sample.locations]
    names = [f.lines[-1][0] if f.lines else "" for f in frames]
    checks = [i for i, n in enumerate(names) if n.split(".")[0] == "__check_object_size"]
    if not checks:
        return []
    site = sample.labels.get("callsite", "")
    start = checks[-1] + 1
    for end in range(start, len(frames)):
        if names[end].split(".")[0] == site:
            return frames[start:end + 1]
    return []

