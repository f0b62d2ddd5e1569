#!/usr/bin/env python3
"""VM tier: boot Debian's own kernels under QEMU and check usercopy counts against the kernel.

Phase 1: the independent reference only (kprobe events + hist triggers keyed on the stack, no
hucprof code): exactly N UDP send/recv pairs must give exactly N __check_object_size calls from
udp_recvmsg (to_user) and from udp_sendmsg (from_user, immediate caller ip_generic_getfrag), the
64 KiB netlink message of seed 001 must hit find_vmap_area from both netlink_sendmsg and
netlink_recvmsg on 6.1, and hardened_usercopy=off must silence the sub-checks.

Usage: vm_tier.py BUILD_DIR [--kernel 6.1] [--verbose]
Exit: 0 pass, 1 fail, 77 skip (ctest SKIP_RETURN_CODE).
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import sys
import time
from pathlib import Path
from typing import Callable

sys.dont_write_bytecode = True  # keep the source tree clean
sys.path.insert(0, str(Path(__file__).resolve().parent))
import histref  # noqa: E402
import vmlib  # noqa: E402
from vmlib import Skip, VmFailure, log  # noqa: E402

HERE = Path(__file__).resolve().parent

UDP_N = 1000
UDP_PAYLOAD = 64
NL_M = 100
NL_BIG_M = 10
NL_BIG_SIZE = 6 << 20   # > KMALLOC_MAX_SIZE (4 MiB): kvmalloc must fall back to vmalloc


@dataclasses.dataclass
class KernelSpec:
    label: str
    meta_package: str
    # Does a 64 KiB unicast netlink skb head come from vmalloc? 6.1: always (vmalloc in
    # netlink_alloc_large_skb). 6.12: kvmalloc -> the page allocator satisfies an order-4
    # request in a fresh guest, so no vmalloc.
    netlink_64k_vmalloc: bool


KERNELS = [
    KernelSpec("6.1", "linux-image-amd64", netlink_64k_vmalloc=True),
    KernelSpec("6.12", "linux-image-6.12-amd64", netlink_64k_vmalloc=False),
]

# Probes set up by guest/reference.sh: name -> probed kernel function.
PROBES = {"ucheck": "__check_object_size", "uheap": "__check_heap_object",
          "ustack": "check_stack_object", "uvmap": "find_vmap_area"}


@dataclasses.dataclass
class Row:
    kernel: str
    run: str
    workload: str
    what: str
    expected: int | None    # None: reported, not asserted
    got: int | None
    note: str = ""

    @property
    def ok(self) -> bool:
        return self.expected is None or self.expected == self.got


@dataclasses.dataclass
class RunSpec:
    name: str
    extra_cmdline: str
    workloads: list[tuple[str, str]]          # (tag, command)
    check: Callable[["RunContext"], list[Row]]


@dataclasses.dataclass
class RunContext:
    spec: KernelSpec
    run: RunSpec
    res: vmlib.RunResult

    def hist(self, probe: str, tag: str) -> histref.Hist | None:
        p = self.res.file(f"hist-{probe}-{tag}.txt")
        return histref.parse_file(p) if p.exists() else None

    def count(self, probe, tag, what, expected, field="hitcount", note="", **sel) -> Row:
        h = self.hist(probe, tag)
        got = None if h is None else h.sum(field, probed=PROBES[probe], **sel)
        if h is None:
            note = (note + "; " if note else "") + f"no {PROBES[probe]} on this kernel"
        return Row(self.spec.label, self.run.name, tag, f"{PROBES[probe]}: {what}", expected,
                   got, note)


# ---------------------------------------------------------------------------------------------
# Checks
# ---------------------------------------------------------------------------------------------

def common_rows(c: RunContext) -> list[Row]:
    """Every hist must be complete and no kprobe hit may be missed, or counts mean nothing."""
    rows = []
    for tag, _ in c.run.workloads:
        rc = c.res.file(f"workload-{tag}.rc")
        rows.append(Row(c.spec.label, c.run.name, tag, "workload exit status", 0,
                        int(rc.read_text()) if rc.exists() else None))
        dropped = 0
        for probe in PROBES:
            h = c.hist(probe, tag)
            if h is not None:
                dropped += h.totals.get("Dropped", 0)
        rows.append(Row(c.spec.label, c.run.name, tag, "hist entries dropped (all probes)", 0,
                        dropped))
        prof = c.res.file(f"kprobe_profile-{tag}.txt")
        missed = None
        if prof.exists():
            missed = 0
            for line in prof.read_text().splitlines():
                parts = line.split()
                if len(parts) == 3 and parts[0] in PROBES:
                    missed += int(parts[2])
        rows.append(Row(c.spec.label, c.run.name, tag, "kprobe misses (all probes)", 0, missed))
    return rows


def udp_rows(c: RunContext, tag: str, hardened: bool) -> list[Row]:
    n, p = UDP_N, UDP_PAYLOAD
    sub = n if hardened else 0
    return [
        c.count("ucheck", tag, "udp_recvmsg to_user calls", n, contains=["udp_recvmsg"], to_user=1),
        c.count("ucheck", tag, "udp_recvmsg to_user bytes", n * p, "n",
                contains=["udp_recvmsg"], to_user=1),
        c.count("ucheck", tag, "udp_sendmsg from_user calls", n, contains=["udp_sendmsg"],
                to_user=0),
        c.count("ucheck", tag, "udp_sendmsg from_user bytes", n * p, "n",
                contains=["udp_sendmsg"], to_user=0),
        c.count("ucheck", tag, "  of which caller ip_generic_getfrag<-__ip_append_data", n,
                caller="ip_generic_getfrag", contains=["__ip_append_data", "ip_make_skb",
                                                       "udp_sendmsg"], to_user=0),
        c.count("ucheck", tag, "move_addr_to_user in recvfrom", n,
                caller="move_addr_to_user", contains=["__sys_recvfrom"], to_user=1),
        c.count("ucheck", tag, "move_addr_to_kernel in sendto", n,
                caller="move_addr_to_kernel", contains=["__sys_sendto"], to_user=0),
        c.count("uheap", tag, "slab check from udp_recvmsg", sub, contains=["udp_recvmsg"],
                to_user=1),
        c.count("uheap", tag, "slab check from udp_sendmsg", sub, contains=["udp_sendmsg"],
                to_user=0),
        c.count("ustack", tag, "stack check from move_addr_to_user (recvfrom)", sub,
                contains=["move_addr_to_user", "__sys_recvfrom"]),
        c.count("uvmap", tag, "vmalloc check from udp", 0,
                contains=["__check_object_size", "udp_recvmsg"]),
    ]


def netlink_rows(c: RunContext, tag: str, m: int, size: int, vmalloc: bool | None) -> list[Row]:
    exp_v = None if vmalloc is None else (m if vmalloc else 0)
    note = "" if vmalloc is None else ("vmalloc'ed skb head" if vmalloc else
                                       "kvmalloc: head from the page allocator")
    return [
        c.count("ucheck", tag, "netlink_sendmsg from_user calls", m, contains=["netlink_sendmsg"],
                to_user=0),
        c.count("ucheck", tag, "netlink_sendmsg from_user bytes", m * size, "n",
                contains=["netlink_sendmsg"], to_user=0),
        c.count("ucheck", tag, "netlink_recvmsg to_user calls", m, contains=["netlink_recvmsg"],
                to_user=1),
        c.count("uvmap", tag, "vmalloc check from netlink_sendmsg", exp_v, note=note,
                contains=["__check_object_size", "netlink_sendmsg"]),
        c.count("uvmap", tag, "vmalloc check from netlink_recvmsg", exp_v, note=note,
                contains=["__check_object_size", "netlink_recvmsg"]),
        c.count("uheap", tag, "slab check from netlink_sendmsg", None,
                contains=["netlink_sendmsg"]),
    ]


def bin_path(build: Path, name: str) -> Path:
    return build / "vm-cache" / "bin" / name


def reference_run(build: Path, spec: KernelSpec) -> RunSpec:
    udp = bin_path(build, "udp_pairs")
    nl = bin_path(build, "netlink_self")
    workloads = [("udp", f"{udp} {UDP_N} {UDP_PAYLOAD}"),
                 ("netlink64k", f"{nl} {NL_M} 65536"),
                 ("netlinkbig", f"{nl} {NL_BIG_M} {NL_BIG_SIZE}")]

    def check(c: RunContext) -> list[Row]:
        return (common_rows(c) + udp_rows(c, "udp", hardened=True)
                + netlink_rows(c, "netlink64k", NL_M, 65536, spec.netlink_64k_vmalloc)
                + netlink_rows(c, "netlinkbig", NL_BIG_M, NL_BIG_SIZE, True))
    return RunSpec("reference", "", workloads, check)


def hardened_off_run(build: Path, spec: KernelSpec) -> RunSpec:
    udp = bin_path(build, "udp_pairs")
    workloads = [("udp", f"{udp} {UDP_N} {UDP_PAYLOAD}")]

    def check(c: RunContext) -> list[Row]:
        cmdline = c.res.file("cmdline.txt").read_text().split()
        return (common_rows(c)
                + [Row(spec.label, "hardened_usercopy=off", "-", "guest saw the extra cmdline", 1,
                       int("hardened_usercopy=off" in cmdline))]
                + udp_rows(c, "udp", hardened=False))
    return RunSpec("hardened_usercopy=off", "hardened_usercopy=off", workloads, check)


# ---------------------------------------------------------------------------------------------

def print_table(rows: list[Row]) -> None:
    hdr = ("kernel", "run", "workload", "check", "expected", "got", "")
    data = [(r.kernel, r.run, r.workload, r.what,
             "-" if r.expected is None else str(r.expected),
             "n/a" if r.got is None else str(r.got),
             ("ok" if r.expected is not None else "info") if r.ok else "FAIL")
            + ((f"  ({r.note})",) if r.note else ("",)) for r in rows]
    widths = [max(len(str(x[i])) for x in [hdr] + [d[:7] for d in data]) for i in range(7)]
    fmt = "  ".join(f"{{:{'>' if i in (4, 5) else '<'}{w}}}" for i, w in enumerate(widths))
    print(fmt.format(*hdr))
    print("  ".join("-" * w for w in widths))
    for d in data:
        print(fmt.format(*d[:7]) + d[7])
    sys.stdout.flush()


def write_artifacts(c: RunContext) -> None:
    """Folded stacks per probe/workload: input for comparing against hucprof's folding later."""
    for tag, _ in c.run.workloads:
        for probe, fn in PROBES.items():
            h = c.hist(probe, tag)
            if h is not None:
                c.res.file(f"folded-{probe}-{tag}.txt").write_text(
                    "\n".join(histref.folded(h, fn)) + "\n")


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("build_dir", type=Path)
    ap.add_argument("--kernel", action="append", help="only these kernel labels (6.1, 6.12)")
    ap.add_argument("--run", action="append", help="only these runs (reference, hardened_usercopy=off)")
    ap.add_argument("--verbose", "-v", action="store_true", help="echo guest consoles live")
    ap.add_argument("--timeout", type=float, default=300, help="hard timeout per VM boot, s")
    args = ap.parse_args()

    t_start = time.monotonic()
    build = args.build_dir.resolve()
    cache = build / "vm-cache"
    runs_dir = build / "vm-runs"
    cache.mkdir(parents=True, exist_ok=True)
    runs_dir.mkdir(parents=True, exist_ok=True)

    all_rows: list[Row] = []
    timings = []
    failures = []
    try:
        vmlib.preflight()
        for name in ("udp_pairs", "netlink_self"):
            vmlib.compile_c(HERE / "workloads" / f"{name}.c", bin_path(build, name))
        apt_state: dict = {}
        specs = [k for k in KERNELS if not args.kernel or k.label in args.kernel]
        if not specs:
            raise Skip(f"no kernel matches {args.kernel}")
        for spec in specs:
            k = vmlib.resolve_kernel(spec.label, spec.meta_package, cache, apt_state)
            for opt in ("CONFIG_HARDENED_USERCOPY", "CONFIG_KPROBE_EVENTS", "CONFIG_HIST_TRIGGERS"):
                if k.config_value(opt) != "y":
                    raise VmFailure(f"{k.package}: {opt} is not y; this tier needs it")
            initrd = cache / f"initramfs-{k.release}.cpio"
            modules = vmlib.build_initramfs(k, initrd)
            log(f"{spec.label}: initramfs modules in load order: {' '.join(modules) or '(none)'}")
            for run in (reference_run(build, spec), hardened_off_run(build, spec)):
                if args.run and run.name not in args.run:
                    continue
                res_dir = runs_dir / f"{spec.label}-{run.name.replace('=', '-')}"
                res = vmlib.run_vm(k, initrd, HERE / "guest" / "reference.sh", res_dir,
                                   extra_cmdline=run.extra_cmdline,
                                   env={"HUCVM_BIN": str(cache / "bin"),
                                        "HUCVM_WORKLOADS": "\n".join(f"{t} {c}" for t, c
                                                                     in run.workloads)},
                                   timeout_s=args.timeout, echo_console=args.verbose)
                timings.append((spec.label, run.name, res.wall_s, res.boot_to_test_s, res.test_s))
                if res.guest_rc != 0:
                    failures.append(f"{spec.label}/{run.name}: guest script exit {res.guest_rc}")
                    print(vmlib.format_console(res), file=sys.stderr)
                ctx = RunContext(spec, run, res)
                try:
                    order = {t: i for i, (t, _) in enumerate(run.workloads)}
                    rows = sorted(run.check(ctx), key=lambda r: order.get(r.workload, -1))
                    write_artifacts(ctx)
                except (histref.HistParseError, OSError, ValueError) as e:
                    failures.append(f"{spec.label}/{run.name}: cannot evaluate results: {e}")
                    print(vmlib.format_console(res), file=sys.stderr)
                    continue
                print(f"\n== kernel {spec.label} ({k.release}), run {run.name}, "
                      f"results in {res.results_dir}")
                print_table(rows)
                missing = res.file("ref-missing.txt").read_text().split("\n") \
                    if res.file("ref-missing.txt").exists() else []
                print(f"   stack key: {res.file('ref-stackkey.txt').read_text().strip()}; "
                      f"real symbols: "
                      + ", ".join(l.split()[1] for l in
                                  res.file("kallsyms-usercopy.txt").read_text().splitlines())
                      + (f"; not probed (absent): {', '.join(x for x in missing if x)}"
                         if any(missing) else ""))
                all_rows += rows
    except Skip as e:
        print(f"SKIP: {e}")
        return vmlib.SKIP
    except VmFailure as e:
        print(f"FAIL: {e}")
        return 1

    bad = [r for r in all_rows if not r.ok]
    total = time.monotonic() - t_start
    print("\n== timings")
    for label, run, wall, b2t, tst in timings:
        print(f"   {label:5} {run:22} qemu wall {wall:6.1f}s   boot-to-test {b2t or 0:5.2f}s "
              f"(guest clock)   test {tst or 0:5.2f}s")
    print(f"   tier total {total:.1f}s")
    summary = {"rows": [dataclasses.asdict(r) | {"ok": r.ok} for r in all_rows],
               "timings": timings, "total_s": total, "failures": failures}
    (runs_dir / "summary.json").write_text(json.dumps(summary, indent=1))
    for f in failures:
        print(f"FAIL: {f}")
    for r in bad:
        print(f"FAIL: {r.kernel} {r.run} {r.workload}: {r.what}: expected {r.expected}, got {r.got}")
    if failures or bad or not all_rows:
        return 1
    print(f"PASS: {len(all_rows)} checks ({sum(r.expected is not None for r in all_rows)} asserted)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
