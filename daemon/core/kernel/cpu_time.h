#pragma once
#include <cstddef>
#include <cstdint>

namespace hucprof {

// The CPU time one cpu-clock sample stands for. A cpu-clock perf event is an hrtimer, and the
// kernel turns a requested frequency into a fixed timer period of NSEC_PER_SEC / frequency
// nanoseconds (integer division, kernel/events/core.c: perf_swevent_init_hrtimer), so every
// sample on every CPU is exactly this long. 0 when sampling is off (frequency 0).
uint64_t cpu_clock_period_ns(uint64_t frequency_hz);

// The period hucprof opens the cpu-clock event of the index-th sampled CPU with: the nominal
// period, moved by whole steps of 1/2048 of it, a different one on each of 8 CPUs in turn and
// centred on the nominal one (at most ±0.17 %). Events opened with one period and enabled one
// after another tick in step on every CPU for the whole session, each CPU's sample a fixed few
// microseconds after another's; on a workload coupled across CPUs (a sender's interrupts to its
// receiver) that fixed phase showed the receiver's CPU at one moment of the sender's sampling
// interrupt, and the share of check samples excluded as interrupts fell from 63 % to 4 %.
// Periods a step apart slide past each other by a whole period every 2048 periods (2 s at
// 1000 Hz, 21 s at 99 Hz), so every phase is sampled alike (docs/design.md, "Sampling mode").
// CPUs 8 apart keep one period, and the phase their enabling gave them.
uint64_t cpu_clock_period_ns_on(uint64_t frequency_hz, size_t sampled_index);
inline constexpr int kSamplingPeriodSteps = 8;
inline constexpr int kSamplingPeriodStepFraction = 2048;

// samples × the nominal period, in seconds: CPU time summed over CPUs (each CPU's own period
// is within ±0.17 % of it).
double cpu_clock_seconds(uint64_t samples, uint64_t frequency_hz);

}  // namespace hucprof
