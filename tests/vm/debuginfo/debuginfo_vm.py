#!/usr/bin/env python3
"""VM test of the kernel's debuginfo: the copy function and source line behind every call site,
against references nobody here wrote.

Per kernel (Debian's 6.1 and 6.12) it downloads linux-image-RELEASE-dbg once into
BUILD/vm-cache/debuginfo (only vmlinux and the af_alg/algif_hash modules are unpacked from the
~1 GB package; the package is deleted) and boots the kernel once, running
tests/vm/guest/hucprof_guest.py with three sessions:

  probe   `hucprof doctor` and `hucprof run --mode probe --debuginfo.path DIR` (the unpacked
          package) while the kernel's own kprobe + hist trigger on __check_object_size watches
          UDP, TCP, netlink and AF_ALG (a module) workloads; the cumulative profile is saved.
  sample  `hucprof doctor --debuginfo.path OTHER` (the other kernel's vmlinux: must be refused
          for its build-id) and `hucprof run --mode sample` with the debuginfo during a UDP flood.
  none    `hucprof run --debuginfo.path none`: the output has no source lines and no copy series.

On the host it checks, with Google's pprof reading the profiles and binutils' addr2line reading
the debuginfo:
  - for every call site of each workload (those whose checks rose by at least the workload's
    count), every frame from the check's caller up to the call site: the inline chain and
    file:line hucprof put into the profile equal `addr2line -i -f` at the same address (the
    frame's offset from _stext, less one: a return address); module frames, which profiles keep
    without an address, at the symbol+offset the kernel's own stack trace (the hist) gives;
  - the same for the sampling session's top call sites;
  - udp_recvmsg's copy is copy_to_iter on both kernels (profile label and
    usercopy_copy_checks_total, which rises by exactly the datagrams and sums to
    usercopy_checks_total per call site);
  - `hucprof report` prints udp_recvmsg's copy path with addr2line's files and lines;
  - doctor names the accepted vmlinux and algif_hash's module debuginfo, and refuses the other
    kernel's vmlinux for its build-id;
  - a debuginfod client (hucvm_debuginfod, hucprof's own code) fetches 6.1's vmlinux by build-id
    from a real `debuginfod` (Debian's package) serving the unpacked file on 127.0.0.1, in a
    network namespace of its own, and resolves udp_recvmsg's call site as addr2line does.

Usage: debuginfo_vm.py BUILD_DIR [--kernel 6.1|6.12] [-v]
Exit: 0 pass, 1 fail, 77 skip (qemu, busybox, apt, debuginfod or Google's pprof missing).
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.dont_write_bytecode = True
HERE = Path(__file__).resolve().parent
VM = HERE.parent
sys.path.insert(0, str(VM))
sys.path.insert(0, str(VM.parent / "lib"))
import hucprof_testlib as tl  # noqa: E402
import initramfs  # noqa: E402
import kernel_packages  # noqa: E402
import qemu_run  # noqa: E402
import vmlib  # noqa: E402
from debuginfo_ref import (Addr2line, Location, Sample, Symbols, caller_to_site,  # noqa: E402
                           chain_text, copy_of, fetch_debuginfo, pprof_raw, same_chain)
from vmlib import Skip, VmFailure, log  # noqa: E402

KERNELS = [("6.1", "linux-image-amd64"), ("6.12", "linux-image-6.12-amd64")]
UDP_N, UDP_PAYLOAD = 200, 64
TCP_N, TCP_PAYLOAD = 200, 512
NL_M, NL_SIZE = 20, 65536
ALG_N = 50
FLOOD_SECONDS = 4
DAEMON_ARGS = ["--interval", "500ms", "--top-k", "1000"]
# What is unpacked from linux-image-RELEASE-dbg (paths below its usr/lib/debug/).
MODULES = {"af_alg": "kernel/crypto/af_alg.ko", "algif_hash": "kernel/crypto/algif_hash.ko"}
# The guest's plan: the symbols hucprof_guest.py records from kallsyms.
KALLSYMS = ["__check_object_size", "udp_recvmsg"]
ADDR2LINE = Addr2line()


@dataclasses.dataclass
class Row:
    kernel: str
    what: str
    expected: object
    got: object
    note: str = ""

    @property
    def ok(self) -> bool:
        return self.expected is None or self.expected == self.got


# ---------------------------------------------------------------------------------------------
# The debuginfo packages
# ---------------------------------------------------------------------------------------------

def vmlinux_of(dbg: Path, release: str) -> Path:
    return dbg / "usr" / "lib" / "debug" / "boot" / f"vmlinux-{release}"


def module_of(dbg: Path, release: str, module: str) -> Path:
    return dbg / "usr" / "lib" / "debug" / "lib" / "modules" / release / MODULES[module]


# ---------------------------------------------------------------------------------------------
# The kernel's own stack traces (the references of debuginfo_ref.py are shared with arm64)
# ---------------------------------------------------------------------------------------------

def hist_stacks(path: Path) -> list[tuple[list[tuple[str, int, str]], int]]:
    """The kernel's stacks of a hist file: frames above __check_object_size as (symbol, offset,
    module), with their hit counts."""
    out = []
    for block in path.read_text().split("{ ")[1:]:
        frames = re.findall(r"^\s+([\w.]+)\+0x([0-9a-f]+)/0x[0-9a-f]+(?: \[(\w+)\])?$", block,
                            re.M)
        hits = re.search(r"hitcount:\s+(\d+)", block)
        names = [f[0] for f in frames]
        if "__check_object_size" not in names or not hits:
            continue
        above = frames[names.index("__check_object_size") + 1:]
        out.append(([(f[0], int(f[1], 16), f[2]) for f in above], int(hits.group(1))))
    return out


# ---------------------------------------------------------------------------------------------
# The guest's plan
# ---------------------------------------------------------------------------------------------

@dataclasses.dataclass
class Tools:
    hucprof: Path
    pprof: Path
    flood: Path
    fetcher: Path
    udp_pairs: Path
    tcp_pairs: Path
    netlink_self: Path
    af_alg_hash: Path


def find_tools(build: Path) -> Tools:
    bin_dir = build / "vm-cache" / "bin"
    t = Tools(hucprof=build / "daemon" / "hucprof", pprof=build / "tests" / "tools" / "pprof",
              flood=build / "tests" / "tools" / "huc_udp_flood",
              fetcher=build / "tests" / "vm" / "debuginfo" / "hucvm_debuginfod",
              udp_pairs=bin_dir / "udp_pairs", tcp_pairs=bin_dir / "tcp_pairs",
              netlink_self=bin_dir / "netlink_self", af_alg_hash=bin_dir / "af_alg_hash")
    for p in (t.hucprof, t.flood, t.fetcher):
        if not p.exists():
            raise VmFailure(f"{p} not built (run ninja in {build} first)")
    if not t.pprof.exists():
        raise Skip(f"Google's pprof was not built ({t.pprof}): needs golang-go and "
                   "golang-github-google-pprof-dev (scripts/install-deps.sh)")
    for tool in ("addr2line", "nm", "objcopy", "readelf", "debuginfod", "curl", "unshare", "ip"):
        if shutil.which(tool) is None:
            raise Skip(f"{tool} not installed (scripts/install-deps.sh: binutils, debuginfod, "
                       "curl, util-linux, iproute2)")
    vmlib.compile_c(VM / "workloads" / "udp_pairs.c", t.udp_pairs)
    vmlib.compile_c(VM / "workloads" / "netlink_self.c", t.netlink_self)
    vmlib.compile_c(HERE / "workloads" / "tcp_pairs.c", t.tcp_pairs)
    vmlib.compile_c(HERE / "workloads" / "af_alg_hash.c", t.af_alg_hash)
    return t


WORKLOADS = {  # tag: (argv builder, count a call site of it rises by at least)
    "udp": (lambda t: [str(t.udp_pairs), str(UDP_N), str(UDP_PAYLOAD)], UDP_N),
    "tcp": (lambda t: [str(t.tcp_pairs), str(TCP_N), str(TCP_PAYLOAD)], TCP_N),
    "netlink": (lambda t: [str(t.netlink_self), str(NL_M), str(NL_SIZE)], NL_M),
    "alg": (lambda t: [str(t.af_alg_hash), str(ALG_N)], ALG_N),
}


def plan(tools: Tools, dbg: Path, other_vmlinux: Path) -> dict:
    probe = ["--mode", "probe", "--debuginfo.path", str(dbg)] + DAEMON_ARGS
    return {"hucprof": str(tools.hucprof), "kallsyms": KALLSYMS, "sessions": [
        {"name": "probe", "args": probe, "doctor": ["--mode", "probe", "--debuginfo.path",
                                                    str(dbg)], "maps": False, "profile": True,
         "workloads": [{"tag": tag, "argv": argv(tools), "reference": True}
                       for tag, (argv, _) in WORKLOADS.items()]},
        {"name": "sample", "args": ["--mode", "sample", "--sample-frequency", "999",
                                    "--debuginfo.path", str(dbg)] + DAEMON_ARGS,
         "doctor": ["--mode", "sample", "--debuginfo.path", str(other_vmlinux)], "maps": False,
         "profile": True,
         "workloads": [{"tag": "flood", "argv": [str(tools.flood), "--seconds",
                                                 str(FLOOD_SECONDS), "--payload", "64",
                                                 "--senders", "2"], "reference": False}]},
        {"name": "none", "args": ["--mode", "probe", "--debuginfo.path", "none"] + DAEMON_ARGS,
         "doctor": None, "maps": False, "profile": True,
         "workloads": [{"tag": "udp", "argv": WORKLOADS["udp"][0](tools),
                        "reference": False}]},
    ]}


# ---------------------------------------------------------------------------------------------
# Judging one kernel's boot
# ---------------------------------------------------------------------------------------------

class Judge:
    def __init__(self, label: str, k: kernel_packages.Kernel, dbg: Path, res: qemu_run.RunResult,
                 tools: Tools):
        self.label, self.k, self.dbg, self.res, self.tools = label, k, dbg, res, tools
        self.rows: list[Row] = []
        self.vmlinux = vmlinux_of(dbg, k.release)
        self.syms = Symbols(self.vmlinux)
        self.stext = self.syms.values["_stext"]
        self.module_syms = {m: Symbols(module_of(dbg, k.release, m)) for m in MODULES}
        self.compared = 0

    def row(self, what, expected, got, note=""):
        self.rows.append(Row(self.label, what, expected, got, note))

    def metrics(self, name: str):
        p = self.res.file(name)
        return tl.parse_metrics(p.read_text()) if p.exists() else None

    def rise(self, tag: str, metric: str, **labels) -> dict[tuple, float]:
        before, after = self.metrics(f"{tag}-before.txt"), self.metrics(f"{tag}-after.txt")
        if before is None or after is None:
            return {}
        key = lambda l: tuple(sorted(l.items()))  # noqa: E731
        b = {key(l): v for l, v in tl.select(before, metric, **labels)}
        return {key(l): v - b.get(key(l), 0) for l, v in tl.select(after, metric, **labels)}

    def callsites_risen(self, tag: str, n: int) -> set[str]:
        out: dict[str, float] = {}
        for labels, d in self.rise(tag, "usercopy_checks_total").items():
            site = dict(labels)["callsite"]
            out[site] = out.get(site, 0) + d
        return {s for s, d in out.items() if d >= n}

    # -- frames against addr2line ---------------------------------------------------------------

    def reference_for(self, frame: Location, hist: list, position: int,
                      path_names: list[str]) -> tuple[list[tuple], str] | None:
        """addr2line's chain at the frame: vmlinux by the profile's address (offset from _stext;
        less one, a return address), a module by the kernel's own stack trace's symbol+offset at
        the same position of a stack with the same functions."""
        if frame.mapping == "[kernel.kallsyms]":
            addr = self.stext + frame.address - 1
            return ADDR2LINE.chain(self.vmlinux, addr), f"vmlinux 0x{addr:x}"
        module = frame.mapping.strip("[]")
        if module not in self.module_syms:
            return None
        name = frame.lines[-1][0]
        offsets = set()
        for frames, _ in hist:
            if [f[0] for f in frames[:len(path_names)]] == path_names:
                offsets.add(frames[position][1])
        if len(offsets) != 1:
            return None
        value = self.module_syms[module].values.get(name)
        if value is None:
            return None
        off = offsets.pop()
        ko = module_of(self.dbg, self.k.release, module)
        return (ADDR2LINE.chain(ko, value + off - 1, ".text"),
                f"{ko.name} .text 0x{value + off - 1:x} ({name}+0x{off:x} in the kernel's stack)")

    def compare_path(self, where: str, sample: Sample, locs: dict[int, Location],
                     hist: list) -> None:
        path = caller_to_site(sample, locs)
        site = sample.labels.get("callsite", "?")
        if not path:
            self.row(f"{where} {site}: stack from the check's caller to the call site", "found",
                     "not found")
            return
        names = [f.lines[-1][0] for f in path]
        for i, frame in enumerate(path):
            ref = self.reference_for(frame, hist, i, names)
            module = "" if frame.mapping == "[kernel.kallsyms]" else " " + frame.mapping
            what = f"{where} {site}: frame {i} {names[i]}{module} = addr2line -i"
            if ref is None:
                self.row(what, "a reference address", "none")
                continue
            chain, at = ref
            ok = same_chain(frame.lines, chain)
            self.compared += 1
            self.row(what, "equal", "equal" if ok else "differs",
                     f"{at}: {chain_text(chain)}" + ("" if ok else
                                                     f" | hucprof: {chain_text(frame.lines)}"))

    # -- the checks ------------------------------------------------------------------------------

    def doctor(self, other: Path) -> None:
        text = self.res.file("probe-doctor.txt").read_text() \
            if self.res.file("probe-doctor.txt").exists() else ""
        m = re.search(r"^\s+vmlinux\s+(yes|no)\s+(.*)$", text, re.M)
        self.row("doctor: vmlinux debuginfo found", f"yes {self.vmlinux}",
                 f"{m.group(1)} {m.group(2)}" if m else "no such line")
        m = re.search(r"^\s+modules\s+(yes|no)\s+(.*)$", text, re.M)
        self.row("doctor: algif_hash's debuginfo found", True,
                 bool(m and m.group(1) == "yes" and "algif_hash" in m.group(2)),
                 m.group(0).strip() if m else "no modules line")
        text = self.res.file("sample-doctor.txt").read_text() \
            if self.res.file("sample-doctor.txt").exists() else ""
        m = re.search(r"^\s+vmlinux\s+no\s+(.*)$", text, re.M)
        refused = bool(m and str(other) in m.group(1) and "refused: its build-id" in m.group(1)
                       and "is not the running kernel's" in m.group(1))
        self.row("doctor: the other kernel's vmlinux is refused for its build-id", True, refused,
                 m.group(1)[:160] if m else "no vmlinux line")

    def probe_session(self) -> dict[str, Sample]:
        profile = self.res.file("probe-profile.pb.gz")
        if not profile.exists():
            self.row("probe session: profile saved", True, False)
            return {}
        samples, locs = pprof_raw(self.tools.pprof, profile)
        top: dict[str, Sample] = {}
        for s in samples:
            site = s.labels.get("callsite")
            if site and s.values.get("calls", 0) > top.get(site, Sample({}, [], {})).values.get(
                    "calls", 0):
                top[site] = s
        for tag, (_, n) in WORKLOADS.items():
            sites = sorted(self.callsites_risen(f"probe-{tag}", n))
            self.row(f"probe {tag}: call sites whose checks rose by >= {n}", None, ", ".join(sites))
            if not sites:
                self.row(f"probe {tag}: at least one call site", ">= 1", 0)
            hist_path = self.res.file(f"hist-ucheck-probe-{tag}.txt")
            hist = hist_stacks(hist_path) if hist_path.exists() else []
            for site in sites:
                if site not in top:
                    self.row(f"probe {tag} {site}: in the profile", True, False)
                    continue
                self.compare_path(f"probe {tag}", top[site], locs, hist)
        # The seed chain: udp_recvmsg's copy is copy_to_iter, in the profile and the metrics.
        udp = top.get("udp_recvmsg")
        self.row("udp_recvmsg's copy label in the profile", "copy_to_iter",
                 udp.labels.get("copy") if udp else None)
        rise = self.rise("probe-udp", "usercopy_copy_checks_total", callsite="udp_recvmsg",
                         direction="to_user", copy="copy_to_iter")
        self.row("usercopy_copy_checks_total{udp_recvmsg,to_user,copy_to_iter} rise", UDP_N,
                 round(sum(rise.values())) if rise else None)
        for tag in WORKLOADS:
            checks = self.rise(f"probe-{tag}", "usercopy_checks_total")
            copies = self.rise(f"probe-{tag}", "usercopy_copy_checks_total")
            by_site: dict[tuple, float] = {}
            for labels, d in copies.items():
                l = dict(labels)
                key = (l["callsite"], l["syscall"], l["direction"])
                by_site[key] = by_site.get(key, 0) + d
            bad = [f"{dict(labels)['callsite']}: {d} vs {by_site.get(k, 0)}"
                   for labels, d in checks.items()
                   if (k := (dict(labels)["callsite"], dict(labels)["syscall"],
                             dict(labels)["direction"])) and round(by_site.get(k, 0)) != round(d)]
            self.row(f"probe {tag}: usercopy_copy_checks_total sums over copy to "
                     "usercopy_checks_total per call site", "", "; ".join(bad))
        alg = top.get("hash_recvmsg")
        if alg:
            path = caller_to_site(alg, locs)
            chain = path[0].lines if path else []
            self.row("hash_recvmsg [algif_hash]: copy label = addr2line's copy function",
                     copy_of(chain) or "(no chain)", alg.labels.get("copy"))
        else:
            self.row("hash_recvmsg [algif_hash] in the profile", True, False)
        return top

    def report(self) -> None:
        """`hucprof report` prints udp_recvmsg's copy path with addr2line's files and lines.
        The report prints the top stacks of the first few call sites only, and the harness's
        own bpf and open calls outrank udp_recvmsg: Google's pprof keeps only its samples
        first (-tagfocus), as an operator would."""
        profile = self.res.file("probe-profile.pb.gz")
        udp_only = self.res.results_dir / "probe-profile-udp_recvmsg.pb.gz"
        with open(udp_only, "wb") as f:
            subprocess.run([str(self.tools.pprof), "-proto", "-tagfocus=callsite=udp_recvmsg",
                            str(profile)], stdout=f, stderr=subprocess.PIPE, check=True,
                           timeout=120)
        out = subprocess.run([str(self.tools.hucprof), "report", str(udp_only)],
                             capture_output=True, text=True, timeout=60)
        (self.res.results_dir / "probe-report.txt").write_text(out.stdout + out.stderr)
        block = out.stdout.split("\nudp_recvmsg (recvfrom)", 1)
        m = re.search(r"copy: (udp_recvmsg → .*)\n((?: {12}.*\n)+)", block[1] if len(block) > 1
                      else "")
        self.row("report: udp_recvmsg's copy path", True, bool(m),
                 m.group(1) if m else "no 'copy: udp_recvmsg → …' line")
        if not m:
            return
        self.row("report: udp_recvmsg's copy path ends in copy_to_iter", True,
                 m.group(1).endswith("copy_to_iter"))
        printed = []
        for line in m.group(2).splitlines():
            where, func = line.split()[0], line.split()[1]
            file, _, number = where.rpartition(":")
            printed.append((func, file, int(number) if number.isdigit() else 0))
        samples, locs = pprof_raw(self.tools.pprof, profile)
        udp = max((s for s in samples if s.labels.get("callsite") == "udp_recvmsg"),
                  key=lambda s: s.values.get("calls", 0), default=None)
        path = caller_to_site(udp, locs) if udp else []
        reference = []
        for frame in reversed(path):  # the report prints the call site first
            if frame.mapping == "[kernel.kallsyms]":
                reference += list(reversed(ADDR2LINE.chain(self.vmlinux,
                                                           self.stext + frame.address - 1)))
        self.row("report: udp_recvmsg's copy path lines = addr2line's (call site first)", True,
                 same_chain(printed, reference),
                 "; ".join(f"{f} {file}:{n}" for f, file, n in printed))

    def sample_session(self) -> None:
        profile = self.res.file("sample-profile.pb.gz")
        if not profile.exists():
            self.row("sample session: profile saved", True, False)
            return
        samples, locs = pprof_raw(self.tools.pprof, profile)
        by_site: dict[str, list[Sample]] = {}
        for s in samples:
            by_site.setdefault(s.labels.get("callsite", ""), []).append(s)
        ranked = sorted(by_site, key=lambda c: -sum(s.values.get("samples", 0)
                                                   for s in by_site[c]))
        self.row("sample: top call sites by samples", None, ", ".join(ranked[:3]))
        for site in [c for c in ranked[:2] if c.startswith("udp_")]:
            top = max(by_site[site], key=lambda s: s.values.get("samples", 0))
            self.compare_path("sample", top, locs, [])
            self.row(f"sample {site}: copy label", "set", "set" if top.labels.get("copy")
                     and top.labels["copy"] != "[unknown]" else top.labels.get("copy"))

    def none_session(self) -> None:
        profile = self.res.file("none-profile.pb.gz")
        if not profile.exists():
            self.row("none session: profile saved", True, False)
            return
        samples, locs = pprof_raw(self.tools.pprof, profile)
        with_lines = sum(1 for loc in locs.values() if any(f for _, f, _ in loc.lines))
        self.row("--debuginfo.path none: profile locations with a source file", 0, with_lines)
        self.row("--debuginfo.path none: samples with a copy label", 0,
                 sum(1 for s in samples if "copy" in s.labels))
        after = self.res.file("none-udp-after.txt")
        text = after.read_text() if after.exists() else ""
        self.row("--debuginfo.path none: no usercopy_copy_* family in /metrics", 0,
                 text.count("usercopy_copy_"))
        log_text = self.res.file("none-daemon.log").read_text() \
            if self.res.file("none-daemon.log").exists() else ""
        self.row("--debuginfo.path none: the log says nothing of debuginfo", 0,
                 log_text.count("debuginfo"))


# ---------------------------------------------------------------------------------------------
# debuginfod
# ---------------------------------------------------------------------------------------------

DEBUGINFOD_SCRIPT = r"""
set -e
ip link set lo up
debuginfod -F -d "$WORK/db.sqlite" -p "$PORT" --disable-source-scan -t 0 -g 0 -c 1 "$SERVE" \
    > "$WORK/debuginfod.log" 2>&1 &
server=$!
trap 'kill $server 2>/dev/null; wait $server 2>/dev/null' EXIT
# Ready once its scan indexed the one file it serves (its own metric says so; this debuginfod
# answers GET only, so a HEAD on the build-id would never succeed).
for i in $(seq 1 300); do
    if curl -sf "http://127.0.0.1:$PORT/metrics" 2>/dev/null |
            grep -q '^scanned_files_total{source="file"} 1$'; then
        break
    fi
    sleep 0.2
done
DEBUGINFOD_URLS="http://127.0.0.1:$PORT" DEBUGINFOD_CACHE_PATH="$WORK/cache" \
    "$FETCHER" --notes "$WORK/notes" --release "$RELEASE" --text-offset "$OFFSET" \
    --path "$WORK/empty"
"""


def debuginfod_rows(j: Judge) -> list[Row]:
    """hucprof's debuginfod client against Debian's debuginfod serving the unpacked vmlinux."""
    samples, locs = pprof_raw(j.tools.pprof, j.res.file("probe-profile.pb.gz"))
    udp = max((s for s in samples if s.labels.get("callsite") == "udp_recvmsg"),
              key=lambda s: s.values.get("calls", 0), default=None)
    path = caller_to_site(udp, locs) if udp else []
    if not path or path[-1].mapping != "[kernel.kallsyms]":
        return [Row(j.label, "debuginfod: udp_recvmsg's call site to resolve", True, False)]
    site = path[-1]
    work = Path(tempfile.mkdtemp(prefix="debuginfod-", dir=j.res.results_dir.parent))
    rows: list[Row] = []
    try:
        # The running kernel's notes, as /sys/kernel/notes holds them: vmlinux's .notes.
        subprocess.run(["objcopy", "-O", "binary", "--only-section=.notes", str(j.vmlinux),
                        str(work / "notes")], check=True)
        build_id = re.search(r"Build ID: ([0-9a-f]+)", subprocess.run(
            ["readelf", "-n", str(j.vmlinux)], capture_output=True, text=True,
            check=True).stdout).group(1)
        (work / "empty").mkdir()
        env = dict(os.environ, WORK=str(work), PORT="18002", SERVE=str(j.vmlinux.parent),
                   BUILD_ID=build_id, FETCHER=str(j.tools.fetcher), RELEASE=j.k.release,
                   OFFSET=f"0x{site.address - 1:x}")
        t0 = time.monotonic()
        r = subprocess.run(["unshare", "--net", "sh", "-c", DEBUGINFOD_SCRIPT], env=env,
                           capture_output=True, text=True, timeout=600)
        seconds = time.monotonic() - t0
        (j.res.results_dir / "debuginfod-fetch.txt").write_text(r.stdout + r.stderr)
        accepted = re.search(r"^vmlinux accepted: (.*)$", r.stdout, re.M)
        rows.append(Row(j.label, "debuginfod: vmlinux fetched by build-id into the client's "
                                 "cache and accepted", True,
                        bool(r.returncode == 0 and accepted and
                             accepted.group(1).startswith(str(work / "cache"))),
                        f"{seconds:.0f} s; " + (r.stdout.splitlines() or [r.stderr[-200:]])[0]))
        got = [x.split("\t") for x in r.stdout.splitlines() if x.startswith("line\t")]
        got = [(f, file, int(n)) for _, f, file, n in got]
        ref = ADDR2LINE.chain(j.vmlinux, j.stext + site.address - 1)
        rows.append(Row(j.label, "debuginfod: udp_recvmsg's call site from the fetched file = "
                                 "addr2line -i", True, same_chain(got, ref), chain_text(ref)))
    finally:
        shutil.rmtree(work, ignore_errors=True)
    return rows


# ---------------------------------------------------------------------------------------------

def print_table(rows: list[Row]) -> None:
    for r in rows:
        mark = ("ok" if r.expected is not None else "info") if r.ok else "FAIL"
        exp = "-" if r.expected is None else str(r.expected)
        print(f"  {r.kernel:5} {mark:4}  {r.what}: expected {exp}, got {r.got}"
              + (f"   ({r.note})" if r.note else ""))
    sys.stdout.flush()


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("build_dir", type=Path)
    ap.add_argument("--kernel", action="append", help="only these kernel labels (6.1, 6.12)")
    ap.add_argument("--verbose", "-v", action="store_true", help="echo guest consoles live")
    ap.add_argument("--timeout", type=float, default=600, help="hard timeout per VM boot, s")
    ap.add_argument("--rejudge", action="store_true",
                    help="judge the last boots' results again (BUILD/vm-runs), without booting")
    args = ap.parse_args()
    t_start = time.monotonic()
    build = args.build_dir.resolve()
    cache = build / "vm-cache"
    runs = build / "vm-runs"
    cache.mkdir(parents=True, exist_ok=True)
    runs.mkdir(parents=True, exist_ok=True)
    rows: list[Row] = []
    timings: list[str] = []
    try:
        qemu_run.preflight()
        tools = find_tools(build)
        apt: dict = {}
        kernels = {label: kernel_packages.resolve_kernel(label, meta, cache, apt) for label, meta in KERNELS}
        dbgs = {}
        for label, k in kernels.items():
            t0 = time.monotonic()
            dbgs[label] = fetch_debuginfo(k.release, cache, list(MODULES.values()))
            timings.append(f"{label} debuginfo ready in {time.monotonic() - t0:.0f} s")
        # Releases the archive no longer serves go.
        for old in (cache / "debuginfo").iterdir():
            if old.name not in {k.release for k in kernels.values()}:
                log(f"pruning superseded debuginfo {old.name}")
                shutil.rmtree(old, ignore_errors=True)
        for label, k in kernels.items():
            if args.kernel and label not in args.kernel:
                continue
            other = vmlinux_of(*[(dbgs[o], kernels[o].release) for o in kernels if o != label][0])
            initrd = cache / f"initramfs-debuginfo-{k.release}.cpio"
            mods = initramfs.resolve_modules(
                k, initramfs.optional_modules(k, initramfs.GUEST_MODULES) + list(MODULES))
            initramfs.write_initramfs(initrd, initramfs.GUEST_INIT, mods, [Path(__file__)])
            res_dir = runs / f"debuginfo-{label}"
            t0 = time.monotonic()
            if args.rejudge:
                res = qemu_run.RunResult(k, res_dir, "", 0, "none", 0, None, None, False)
            else:
                res = qemu_run.run_vm(k, initrd, VM / "guest" / "hucprof_guest.py", res_dir,
                                   env={"HUCVM_PLAN": json.dumps(plan(tools, dbgs[label],
                                                                      other))},
                                   timeout_s=args.timeout, echo_console=args.verbose)
            timings.append(f"{label} boot {time.monotonic() - t0:.0f} s (guest test "
                           f"{res.test_s or 0:.0f} s)")
            j = Judge(label, k, dbgs[label], res, tools)
            if res.guest_rc != 0:
                j.row("guest script exit status", 0, res.guest_rc)
                print(qemu_run.format_console(res), file=sys.stderr)
            for s in ("probe", "sample", "none"):
                err = res.file(f"{s}-error.txt")
                j.row(f"{s} session: no harness error", "", err.read_text()[:300]
                      if err.exists() else "")
                rc = res.file(f"{s}-daemon.rc")
                j.row(f"{s} session: hucprof exit status at SIGTERM", 0,
                      int(rc.read_text()) if rc.exists() else None)
            try:
                j.doctor(other)
                j.probe_session()
                j.report()
                j.sample_session()
                j.none_session()
                if label == "6.1":
                    t0 = time.monotonic()
                    j.rows += debuginfod_rows(j)
                    timings.append(f"{label} debuginfod {time.monotonic() - t0:.0f} s")
            except (OSError, ValueError, KeyError, IndexError, subprocess.SubprocessError) as e:
                j.row("results could be evaluated", True, False, f"{type(e).__name__}: {e}")
            j.row("frames compared with addr2line", ">= 8", ">= 8" if j.compared >= 8
                  else j.compared)
            print(f"\n== kernel {label} ({k.release}); results in {res.results_dir}")
            print_table(j.rows)
            rows += j.rows
    except Skip as e:
        print(f"SKIP: {e}")
        return vmlib.SKIP
    except VmFailure as e:
        print(f"FAIL: {e}")
        return 1
    finally:
        ADDR2LINE.close()
    print("\n== timings")
    for t in timings:
        print(f"   {t}")
    print(f"   total {time.monotonic() - t_start:.0f} s")
    bad = [r for r in rows if not r.ok]
    for r in bad:
        print(f"FAIL: {r.kernel} {r.what}: expected {r.expected}, got {r.got}")
    if bad or not rows:
        return 1
    print(f"PASS: {len(rows)} checks ({sum(r.expected is not None for r in rows)} asserted)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
