"""Rows of the followed command (tests/vm/README.md, "Following a command"): `hucprof record
--mode probe -- COMMAND` beside a noise workload counts COMMAND's checks alone, each call site's
calls equal to what the kernel's own hist counted for COMMAND's threads (guest/follow_record.py)."""

from __future__ import annotations

import dataclasses

import histref
from vm_tier_checks import pprof_missed_checks, pprof_raw_calls
from vm_tier_model import FOLLOW_SENDERS, RunContext, Row, fold_reference, parse_folded

TAG = "follow"
# The one check the kernel counts for COMMAND that no followed task made: the write of "0" to
# the cgroup's cgroup.procs by which COMMAND's process (forked by record, not exec'ed yet) moves
# itself into its cgroup; its data is copied, and checked, before the move.
JOIN_SITE = "kernfs_fop_write_iter"


def threads(c: RunContext) -> set[int]:
    return {int(t) for t in (c.text("follow-tids.txt") or "").split()}


def folded_calls(c: RunContext, h: histref.Hist, keep) -> dict[str, int]:
    """Calls per call site (directions together) of the hist entries whose thread `keep`s,
    folded by hucprof's CallsiteFolder (hucvm_fold) as the other reference rows are."""
    entries = [e for e in h.entries if keep(e.keys.get("common_pid"))]
    tsv = fold_reference(c.tools.fold, dataclasses.replace(h, entries=entries),
                         "__check_object_size", False)
    out: dict[str, int] = {}
    for (callsite, _syscall, _direction), (count, _bytes) in parse_folded(tsv).items():
        out[callsite] = out.get(callsite, 0) + count
    return out


def follow_rows(c: RunContext) -> list[Row]:
    error = c.text("follow-error.txt")
    log = (c.text("follow-record.log") or "").strip().splitlines()
    rows = [c.row(TAG, "the guest step's error (last line)", "",
                  "".join((error or "").strip().splitlines()[-1:])),
            c.row(TAG, "hucprof record --mode probe -- COMMAND exit", 0,
                  c.int_file("follow-record.rc"), log[-1] if log else ""),
            c.row(TAG, "the noise ran all through the recording", "running",
                  (c.text("follow-noise.rc") or "").strip() or None)]
    tids = threads(c)
    # huc_udp_flood: its main thread, one receiver and each sender.
    rows.append(c.row(TAG, "COMMAND's threads seen in /proc", 2 + FOLLOW_SENDERS, len(tids),
                      " ".join(map(str, sorted(tids)))))
    h = c.hist("ufollow", TAG)
    path = c.res.file(f"{TAG}.pb.gz")
    if h is None or not path.exists() or not c.tools.pprof.exists():
        return rows + [c.row(TAG, "reference hist, recording and Google's pprof all there", 1,
                             0, f"hist {h is not None}, recording {path.exists()}, "
                             f"pprof {c.tools.pprof.exists()}")]
    ref = folded_calls(c, h, lambda pid: pid in tids)
    noise = folded_calls(c, h, lambda pid: pid not in tids)
    recorded = pprof_raw_calls(c.tools.pprof, path)
    missed = pprof_missed_checks(c.tools.pprof, path)
    c.res.file("follow-callsites.tsv").write_text(
        "# callsite\tkernel (COMMAND's threads)\trecorded\tkernel (every other thread)\n" +
        "".join(f"{s}\t{ref.get(s, 0)}\t{recorded.get(s, 0)}\t{noise.get(s, 0)}\n"
                for s in sorted(set(ref) | set(recorded) | set(noise))))
    rows += [
        # Otherwise a recording that counted everything would pass as well.
        c.row(TAG, "kernel ref: other threads' udp_sendmsg checks during the recording > 0", 1,
              int(noise.get("udp_sendmsg", 0) > 0), f"{noise.get('udp_sendmsg', 0)}"),
        c.row(TAG, "kernel ref: COMMAND's udp_sendmsg checks > 0", 1,
              int(ref.get("udp_sendmsg", 0) > 0), f"{ref.get('udp_sendmsg', 0)}"),
        c.row(TAG, f"kernel ref: COMMAND's {JOIN_SITE} checks >= 1 (joining its cgroup)", 1,
              int(ref.get(JOIN_SITE, 0) >= 1), f"{ref.get(JOIN_SITE, 0)}"),
        c.row(TAG, "the recording counts the checks the kernel skipped its program for",
              "counted", "counted" if missed is not None else None),
        c.row(TAG, "recorded calls, all call sites <= kernel ref (COMMAND's threads) - 1 (join)",
              1, int(sum(recorded.values()) <= sum(ref.values()) - 1),
              f"{sum(recorded.values())} <= {sum(ref.values()) - 1}"),
        c.row(TAG, "kernel ref - 1 (join) - recorded calls <= the recording's missed checks",
              1, None if missed is None
              else int(sum(ref.values()) - 1 - sum(recorded.values()) <= missed),
              f"{sum(ref.values()) - 1 - sum(recorded.values())} <= {missed}"),
    ]
    # A check the kernel skipped the program for is the only way one of COMMAND's checks goes
    # uncounted, and the recording's missed checks (every task's) bound those: each call site's
    # recorded calls lie between the kernel's count less the missed checks and the kernel's
    # count; equal where nothing was missed.
    for callsite in sorted(set(ref) | set(recorded)):
        join = callsite == JOIN_SITE
        want = ref.get(callsite, 0) - join
        got = recorded.get(callsite, 0)
        rows.append(c.row(TAG, f"recorded calls{{callsite={callsite}}} in [kernel ref"
                          + (" - 1 (join)" if join else "") + " - missed, kernel ref"
                          + (" - 1" if join else "") + "]",
                          1, None if missed is None else int(want - missed <= got <= want),
                          f"{got} in [{want - (missed or 0)}, {want}]"))
    return rows
