#!/usr/bin/env python3
"""The arm64 guest's debuginfo, fetched before the boot and judged after it (run-guest.sh
--debuginfo), with the references of the x86 test (tests/vm/debuginfo/debuginfo_ref.py):

  debuginfo_check.py fetch CACHE RELEASE
      Debian's linux-image-RELEASE-dbg:arm64 downloaded once, only its vmlinux unpacked into
      CACHE/debuginfo/RELEASE (the package deleted; other releases' pruned); prints that dir.
  debuginfo_check.py check RESULTS DBG RELEASE PPROF N
      RESULTS is what the guest saved (init.sh): doctor must accept the vmlinux; in the probe
      profile udp_recvmsg's copy is copy_to_iter (label, and usercopy_copy_checks_total rose by
      the N datagrams), and for udp_recvmsg and udp_sendmsg, and the sample profile's top UDP
      call sites, every frame from the check's caller up to the call site has the inline chain
      and file:line of binutils' aarch64-linux-gnu-addr2line -i at the same address.

The reference address of a return address is the instruction before it, arm64's fixed 4 bytes
(the BL), found independently of hucprof's own "one less" (which lands inside the same BL).
Exit 0 pass, 1 fail, 77 skip (the package or a tool missing).
"""

from __future__ import annotations

import shutil
import sys
from pathlib import Path

sys.dont_write_bytecode = True
VM = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(VM), str(VM / "debuginfo"), str(VM.parent / "lib")]
import hucprof_testlib as tl  # noqa: E402
import vmlib  # noqa: E402
from debuginfo_ref import (Addr2line, Symbols, caller_to_site, chain_text,  # noqa: E402
                           fetch_debuginfo, pprof_raw, same_chain)

ADDR2LINE_TOOL = "aarch64-linux-gnu-addr2line"  # binutils-aarch64-linux-gnu (g++-aarch64-linux-gnu)
ARM64_INSN = 4


def vmlinux_of(dbg: Path, release: str) -> Path:
    return dbg / "usr" / "lib" / "debug" / "boot" / f"vmlinux-{release}"


def fetch(cache: Path, release: str) -> int:
    dest = fetch_debuginfo(release, cache, [], arch="arm64")
    for old in (cache / "debuginfo").iterdir():
        if old.name != release:
            vmlib.log(f"pruning superseded debuginfo {old.name}")
            shutil.rmtree(old, ignore_errors=True)
    print(dest)
    return 0


class Check:
    def __init__(self, results: Path, dbg: Path, release: str, pprof: Path):
        self.results, self.pprof = results, pprof
        self.vmlinux = vmlinux_of(dbg, release)
        self.stext = Symbols(self.vmlinux).values["_stext"]
        self.addr2line = Addr2line(ADDR2LINE_TOOL)
        self.failures = 0
        self.compared = 0

    def row(self, what: str, expected, got, note: str = "") -> None:
        ok = expected == got
        self.failures += not ok
        print(f"  {'ok' if ok else 'FAIL':4}  {what}: expected {expected}, got {got}"
              + (f"   ({note})" if note else ""))

    def compare_path(self, where: str, sample) -> None:
        site = sample.labels.get("callsite", "?")
        path = caller_to_site(sample, self.locs[where])
        if not path:
            self.row(f"{where} {site}: stack from the check's caller to the call site", "found",
                     "not found")
            return
        for i, frame in enumerate(path):
            name = frame.lines[-1][0] if frame.lines else "?"
            what = f"{where} {site}: frame {i} {name} = {ADDR2LINE_TOOL} -i"
            if frame.mapping != "[kernel.kallsyms]":
                self.row(what, "a vmlinux frame", frame.mapping)
                continue
            addr = self.stext + frame.address - ARM64_INSN
            chain = self.addr2line.chain(self.vmlinux, addr)
            ok = same_chain(frame.lines, chain)
            self.compared += 1
            self.row(what, "equal", "equal" if ok else "differs",
                     f"vmlinux 0x{addr:x}: {chain_text(chain)}"
                     + ("" if ok else f" | hucprof: {chain_text(frame.lines)}"))

    def profile(self, where: str):
        path = self.results / f"{where}-profile.pb.gz"
        if not path.exists():
            self.row(f"{where}: profile saved by the guest", True, False)
            return None
        samples, self.locs[where] = pprof_raw(self.pprof, path)
        return samples

    def run(self, n: int) -> int:
        self.locs: dict = {}
        doctor = (self.results / "doctor.txt")
        text = doctor.read_text() if doctor.exists() else ""
        line = next((l.split(None, 2) for l in text.splitlines()
                     if l.strip().startswith("vmlinux ")), [])
        self.row("doctor: vmlinux debuginfo accepted", f"yes /mnt/host{self.vmlinux}",
                 " ".join(line[1:3]) if line else "no vmlinux line")
        samples = self.profile("probe")
        if samples is not None:
            top: dict = {}
            for s in samples:
                site = s.labels.get("callsite")
                if site and s.values.get("calls", 0) > (top[site].values.get("calls", 0)
                                                        if site in top else 0):
                    top[site] = s
            udp = top.get("udp_recvmsg")
            self.row("probe: udp_recvmsg's copy label in the profile", "copy_to_iter",
                     udp.labels.get("copy") if udp else None)
            before = tl.parse_metrics((self.results / "probe-before.txt").read_text())
            after = tl.parse_metrics((self.results / "probe-after.txt").read_text())
            want = dict(callsite="udp_recvmsg", direction="to_user", copy="copy_to_iter")
            rise = (sum(v for _, v in tl.select(after, "usercopy_copy_checks_total", **want))
                    - sum(v for _, v in tl.select(before, "usercopy_copy_checks_total", **want)))
            self.row("usercopy_copy_checks_total{udp_recvmsg,to_user,copy_to_iter} rise", n,
                     round(rise))
            for site in ("udp_recvmsg", "udp_sendmsg"):
                if site in top:
                    self.compare_path("probe", top[site])
                else:
                    self.row(f"probe: {site} in the profile", True, False)
        samples = self.profile("sample")
        if samples is not None:
            by_site: dict = {}
            for s in samples:  # those without a call site are the CPU outside the checks
                if s.labels.get("callsite"):
                    by_site.setdefault(s.labels["callsite"], []).append(s)
            ranked = sorted(by_site, key=lambda c: -sum(s.values.get("samples", 0)
                                                       for s in by_site[c]))
            print(f"  info  sample: top call sites by samples: {', '.join(ranked[:3])}")
            udp_sites = [c for c in ranked[:2] if c.startswith("udp_")]
            self.row("sample: a UDP call site among the top two", True, bool(udp_sites))
            for site in udp_sites:
                self.compare_path("sample", max(by_site[site],
                                                key=lambda s: s.values.get("samples", 0)))
        self.addr2line.close()
        self.row("frames compared with addr2line", True, self.compared >= 4,
                 f"{self.compared} frames")
        print(f"debuginfo: {'PASS' if not self.failures else 'FAIL'} "
              f"({self.failures} failed, {self.compared} frames compared)")
        return 1 if self.failures else 0


def main() -> int:
    args = sys.argv[1:]
    try:
        if args[:1] == ["fetch"] and len(args) == 3:
            return fetch(Path(args[1]).resolve(), args[2])
        if args[:1] == ["check"] and len(args) == 6:
            if shutil.which(ADDR2LINE_TOOL) is None:
                raise vmlib.Skip(f"{ADDR2LINE_TOOL} not installed (binutils-aarch64-linux-gnu)")
            if not Path(args[4]).exists():
                raise vmlib.Skip(f"Google's pprof not built ({args[4]}; scripts/build.sh)")
            return Check(Path(args[1]), Path(args[2]).resolve(), args[3], Path(args[4])).run(
                int(args[5]))
    except vmlib.Skip as e:
        print(f"debuginfo: SKIP: {e}", file=sys.stderr)
        return vmlib.SKIP
    except vmlib.VmFailure as e:
        print(f"debuginfo: FAIL: {e}", file=sys.stderr)
        return 1
    print(__doc__, file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main())
