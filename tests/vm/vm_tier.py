#!/usr/bin/env python3
"""VM tier: boot Debian's own kernels under QEMU and prove hucprof's probe mode exact against the
kernel's own counts.

Per kernel (Debian 11's 5.10, Debian 12's 6.1 and 6.12; trixie's 6.12 and the newest of
trixie-backports and sid, through private apt lists) three boots, each running
guest/hucprof_guest.py with a plan:

  fentry   `hucprof run --mode probe --probe.attach fentry` and, at the same time, the kernel-only
           reference (kprobe events + hist triggers keyed on the stack, guest/refprobe.sh) on
           exactly N UDP send/recv pairs and M netlink messages (64 KiB: seed 001's vmalloc path
           on 6.1; 6 MiB on 6.12, where a 64 KiB skb head no longer comes from vmalloc). hucprof's
           counters must rise by exactly N/M per call site, and equal the reference's stacks
           folded by hucprof's own CallsiteFolder (tests/vm/fold_tool.cpp); sub-checks are
           classified inside the check's program (the default --probe.subchecks classify) and
           must equal the kernel's own sub-check calls per call site. Then once more with
           --latency (fexit) and --probe.subchecks attach (a probe per sub-check): the duration
           histogram counts N, the slab sub-check N.
  kprobe   the same with --probe.attach kprobe, plus a UDP flood under probe mode and under
           `--mode sample`: both must name the same top call site.
           Where hucprof's fentry programs cannot load (5.10), the fentry boot only asks doctor
           for fentry: it must refuse, naming the missing helpers and since when.
  hardened_usercopy=off
           the checks are off: hucprof reports usercopy_hardened_enabled 0, attaches nothing,
           counts nothing, exits 0 at SIGTERM with no error line; doctor says so, and what the
           kernel still runs of a check; the reference sees N __check_object_size calls before
           6.15 (early return) and none from 6.15 (the static key moved to the call site), and
           no sub-checks.
Every session: `hucprof doctor` with the session's flags said what `run` then did.
  memory-Ncpus (6.1)
           `hucprof run --mode auto` on a guest with 2 vCPUs but N possible CPUs (-smp
           2,maxcpus=N; N = 2, 64, 128): the memlock bpftool shows for the maps the daemon holds
           stays <= 32 MiB and grows <= 64 KiB per possible CPU, and hucprof_bpf_map_memory_bytes
           names the same maps with the same total.

Usage: vm_tier.py BUILD_DIR [--kernel LABEL | --all]
                  [--run fentry|kprobe|hardened_usercopy=off|memory-64cpus] [-v]
Exit: 0 pass, 1 fail, 77 skip (ctest SKIP_RETURN_CODE).
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import sys
import time
from pathlib import Path

sys.dont_write_bytecode = True  # keep the source tree clean
HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(HERE.parent / "lib"))
import histref  # noqa: E402
import initramfs  # noqa: E402
import kernel_packages  # noqa: E402
import qemu_run  # noqa: E402
import vmlib  # noqa: E402
from vmlib import Skip, VmFailure, log  # noqa: E402
from tier_kernels import KERNELS  # noqa: E402
from vm_tier_checks import memory_growth_rows  # noqa: E402
from vm_tier_model import Row, RunContext, Tools  # noqa: E402
from vm_tier_runs import plan_json, runs_for  # noqa: E402


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


def find_tools(build: Path) -> Tools:
    t = Tools(hucprof=build / "daemon" / "hucprof",
              flood=build / "tests" / "tools" / "huc_udp_flood",
              fold=build / "tests" / "vm" / "hucvm_fold",
              udp_pairs=build / "vm-cache" / "bin" / "udp_pairs",
              netlink_self=build / "vm-cache" / "bin" / "netlink_self",
              in_cgroup=build / "vm-cache" / "bin" / "in_cgroup",
              pprof=build / "tests" / "tools" / "pprof",
              tcp_rr=build / "vm-cache" / "bin" / "tcp_rr")
    for p in (t.hucprof, t.flood, t.fold):
        if not p.exists():
            # Registered by this build, so missing means "not built": a failure, not a skip.
            raise VmFailure(f"{p} not built (run ninja in {build} first)")
    for name in ("udp_pairs", "netlink_self", "in_cgroup", "tcp_rr"):
        vmlib.compile_c(HERE / "workloads" / f"{name}.c", getattr(t, name))
    return t


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("build_dir", type=Path)
    ap.add_argument("--kernel", action="append", choices=[k.label for k in KERNELS],
                    help="only these kernels (default: those CI boots; see --all)")
    ap.add_argument("--all", action="store_true",
                    help="every kernel, also those CI leaves out (bullseye, trixie, sid, "
                         "trixie-backports' cloud and rt flavours)")
    ap.add_argument("--run", action="append",
                    help="only these runs (fentry, kprobe, hardened_usercopy=off, "
                         "memory-2cpus, memory-64cpus, memory-128cpus)")
    ap.add_argument("--verbose", "-v", action="store_true", help="echo guest consoles live")
    ap.add_argument("--timeout", type=float, default=480, help="hard timeout per VM boot, s")
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
        qemu_run.preflight()
        tools = find_tools(build)
        apt_state: dict = {}
        specs = [k for k in KERNELS
                 if (k.label in args.kernel if args.kernel else args.all or k.ci)]
        left_out = [k.label for k in KERNELS if k not in specs]
        if left_out and not args.kernel:
            log(f"not booted in this run (CI's set; --all boots them): {', '.join(left_out)}")
        for spec in specs:
            k = kernel_packages.resolve_kernel(spec.label, spec.meta_package, cache, apt_state,
                                     suite=spec.suite)
            # Without CONFIG_HIST_TRIGGERS (Debian 11) the reference counts a trace buffer.
            for opt in ("CONFIG_HARDENED_USERCOPY", "CONFIG_KPROBE_EVENTS"):
                if k.config_value(opt) != "y":
                    raise VmFailure(f"{k.package}: {opt} is not y; this tier needs it")
            initrd = cache / f"initramfs-{k.release}.cpio"
            modules = initramfs.build_initramfs(k, initrd)
            log(f"{spec.label}: initramfs modules in load order: {' '.join(modules) or '(none)'}")
            runs = [r for r in runs_for(spec, tools) if not args.run or r.name in args.run]
            for run in runs:
                res_dir = runs_dir / f"{spec.label}-{run.name.replace('=', '-')}"
                try:
                    res = qemu_run.run_vm(k, initrd, HERE / "guest" / "hucprof_guest.py", res_dir,
                                       extra_cmdline=run.extra_cmdline,
                                       env={"HUCVM_PLAN": plan_json(run, tools)},
                                       timeout_s=args.timeout, echo_console=args.verbose,
                                       qemu_args=run.qemu_args)
                except VmFailure as e:
                    # One broken boot fails the tier but does not hide the other runs' tables.
                    failures.append(f"{spec.label}/{run.name}: {e}")
                    print(f"FAIL: {spec.label}/{run.name}: {e}", file=sys.stderr)
                    continue
                timings.append((spec.label, run.name, res.wall_s, res.boot_to_test_s, res.test_s))
                # The guest console once per failed run, whatever failed first.
                console_shown = res.guest_rc != 0
                if console_shown:
                    failures.append(f"{spec.label}/{run.name}: guest script exit {res.guest_rc}")
                    print(qemu_run.format_console(res), file=sys.stderr)
                ctx = RunContext(spec, run, res, tools)
                try:
                    rows = run.check(ctx)
                except (histref.HistParseError, OSError, ValueError) as e:
                    failures.append(f"{spec.label}/{run.name}: cannot evaluate results: {e}")
                    if not console_shown:
                        print(qemu_run.format_console(res), file=sys.stderr)
                    continue
                print(f"\n== kernel {spec.label} ({k.release}), run {run.name}, "
                      f"results in {res.results_dir}")
                print_table(rows)
                missing = (ctx.text("ref-missing.txt") or "").split("\n")
                stackkey = (ctx.text("ref-stackkey.txt") or "n/a").strip()
                print(f"   reference stack key: {stackkey}; real symbols: "
                      + ", ".join(ln.split()[1] for ln in
                                  (ctx.text("kallsyms-usercopy.txt") or "").splitlines())
                      + (f"; not probed by the reference (absent): "
                         f"{', '.join(x for x in missing if x)}" if any(missing) else ""))
                if any(not r.ok for r in rows) and not console_shown:
                    print(qemu_run.format_console(res, 60), file=sys.stderr)
                all_rows += rows
            growth = memory_growth_rows(spec.label, runs)
            if growth:
                print(f"\n== kernel {spec.label}, BPF map memory against possible CPUs")
                print_table(growth)
                all_rows += growth
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
              f"(guest clock)   test {tst or 0:6.2f}s")
    print(f"   tier total {total:.1f}s")
    summary = {"rows": [dataclasses.asdict(r) | {"ok": r.ok} for r in all_rows],
               "timings": timings, "total_s": total, "failures": failures}
    (runs_dir / "summary.json").write_text(json.dumps(summary, indent=1))
    for f in failures:
        print(f"FAIL: {f.splitlines()[0]}")
    for r in bad[:40]:
        # With the row's note: CI's digest of a red run shows only these lines.
        note = f" ({r.note})" if r.note else ""
        print(f"FAIL: {r.kernel} {r.run} {r.workload}: {r.what}: expected {r.expected}, "
              f"got {r.got}{note}")
    if len(bad) > 40:
        print(f"FAIL: ... and {len(bad) - 40} more failed checks (tables above)")
    if failures or bad or not all_rows:
        return 1
    print(f"PASS: {len(all_rows)} checks ({sum(r.expected is not None for r in all_rows)} asserted)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
