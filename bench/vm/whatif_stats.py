"""The arithmetic of bench/vm/whatif.py, apart from QEMU: measured speed-ups from A/B boot pairs,
the noise band from A/A and B/B boots, hucprof's predictions pooled over sessions, and the error
of each prediction. Pure functions over the guest's records (Python 3 standard library only).

Records (one dict per line of the guest's measurements.json):
  {"kind": "timing", "workload", "rep", "ops", "wall_ns", "cpu_ns", "busy_ns"}
  {"kind": "sampling" | "latency", "workload", "freq", "ops", "counters": {...}, "gauge": {...}}
    counters: increases over the workload, scraped from hucprof before and after it
      sampling: in_checks (CPU samples inside the checks), busy (kernel + user samples)
      latency:  in_checks (check seconds: usercopy_check_duration_seconds_sum), busy (busy CPU
                seconds: usercopy_busy_cpu_seconds_total), checks (calls timed)
    gauge: hucprof's own usercopy_checks_busy_cpu_ratio / _off_speedup_ratio after the workload
"""

from __future__ import annotations

import dataclasses
import statistics


@dataclasses.dataclass
class Boot:
    kernel: str
    pair: int
    role: str  # "on" (checks run) | "off" (hardened_usercopy=off)
    records: list[dict]


@dataclasses.dataclass
class Measured:
    speedups: list[float]  # per pair: time per op with the checks on / with them off
    median: float
    noise: float  # half-width of the band A/A and B/B boots spread over, as a ratio - 1
    rep_spread: float  # largest (max/min - 1) of the repetitions within one boot

    @property
    def signal(self) -> bool:
        """Every pair's gain is larger than the noise band: the speed-up is real."""
        return bool(self.speedups) and min(self.speedups) - 1 > self.noise


@dataclasses.dataclass
class Predicted:
    share: float | None  # pooled over every session of every checks-on boot
    speedup: float | None
    per_boot: list[float]  # each boot's pooled speed-up: how much one boot's answer varies
    sessions: int
    in_checks: float  # pooled numerator (samples or seconds)
    busy: float  # pooled denominator
    gauge_gap: float | None  # largest |daemon gauge - counter-derived share| over sessions


def per_op(records: list[dict], workload: str, field: str) -> float | None:
    """Median over a boot's repetitions of `field` per operation (ns)."""
    values = [r[field] / r["ops"] for r in records
              if r["kind"] == "timing" and r["workload"] == workload and r["ops"] > 0]
    return statistics.median(values) if values else None


def rep_spread(records: list[dict], workload: str, field: str) -> float:
    values = [r[field] / r["ops"] for r in records
              if r["kind"] == "timing" and r["workload"] == workload and r["ops"] > 0]
    return max(values) / min(values) - 1 if len(values) > 1 and min(values) > 0 else 0.0


def measured(boots: list[Boot], workload: str, field: str = "wall_ns") -> Measured:
    """Speed-up per A/B pair and the noise band.

    The noise band is what boots of the *same* kind disagree by: the ratio of per-op time of
    consecutive checks-on boots (A1/A2, A2/A3, ...) and of consecutive checks-off boots; its
    largest deviation from 1 is the half-width. A speed-up inside it is not distinguishable from
    boot-to-boot variation (KASLR, hash seeds, slab layout) and timer noise."""
    on = {b.pair: per_op(b.records, workload, field) for b in boots if b.role == "on"}
    off = {b.pair: per_op(b.records, workload, field) for b in boots if b.role == "off"}
    pairs = sorted(p for p in on if p in off and on[p] and off[p])
    speedups = [on[p] / off[p] for p in pairs]
    nulls = []
    for side in (on, off):
        keys = sorted(k for k, v in side.items() if v)
        nulls += [side[a] / side[b] for a, b in zip(keys, keys[1:])]
    noise = max((abs(r - 1) for r in nulls), default=float("nan"))
    spread = max((rep_spread(b.records, workload, field) for b in boots), default=0.0)
    return Measured(speedups, statistics.median(speedups) if speedups else float("nan"), noise,
                    spread)


def _pool(records: list[dict]) -> tuple[float, float]:
    return (sum(r["counters"]["in_checks"] for r in records),
            sum(r["counters"]["busy"] for r in records))


def speedup_of(share: float | None) -> float | None:
    return 1 / (1 - share) if share is not None and 0 <= share < 1 else None


def predicted(boots: list[Boot], workload: str, estimator: str) -> Predicted:
    """Pooled share (sum of increases over sum of increases, as a recording rule over all
    sessions would compute it), so sessions with more samples weigh more; plus each boot's own
    answer, and how far the daemon's own gauge was from the counters' answer."""
    sessions = [r for b in boots if b.role == "on" for r in b.records
                if r["kind"] == estimator and r["workload"] == workload]
    num, den = _pool(sessions)
    share = num / den if den > 0 else None
    per_boot = []
    for b in boots:
        if b.role != "on":
            continue
        mine = [r for r in b.records if r["kind"] == estimator and r["workload"] == workload]
        n, d = _pool(mine)
        s = speedup_of(n / d) if d > 0 else None
        if s is not None:
            per_boot.append(s)
    gaps = []
    for r in sessions:
        g = r.get("gauge", {}).get("share")
        c = r["counters"]
        if g is not None and c["busy"] > 0:
            gaps.append(abs(g - c["in_checks"] / c["busy"]))
    return Predicted(share, speedup_of(share), per_boot, len(sessions), num, den,
                     max(gaps) if gaps else None)


def gain_error(predicted_speedup: float | None, measured_speedup: float) -> float | None:
    """Relative error of the predicted gain (speed-up - 1) against the measured gain: the
    number the 30 % goal is about. An error on the speed-up ratio itself would call 1.30x
    "within 30 %" of 1.01x."""
    if predicted_speedup is None or not measured_speedup > 1:
        return None
    return (predicted_speedup - 1) / (measured_speedup - 1) - 1


def verdict(m: Measured, p: Predicted, goal: float = 0.30) -> str:
    if not m.signal:
        return "in noise: no claim"
    err = gain_error(p.speedup, m.median)
    if err is None:
        return "no prediction"
    return "within goal" if abs(err) <= goal else "OFF"


def fmt_x(v: float | None, digits: int = 4) -> str:
    return "n/a" if v is None or v != v else f"{v:.{digits}f}"


def fmt_pct(v: float | None) -> str:
    return "n/a" if v is None or v != v else f"{100 * v:+.0f} %"
