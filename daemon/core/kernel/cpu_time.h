#pragma once
#include <cstdint>

namespace hucprof {

// The CPU time one cpu-clock sample stands for. A cpu-clock perf event is an hrtimer, and the
// kernel turns a requested frequency into a fixed timer period of NSEC_PER_SEC / frequency
// nanoseconds (integer division, kernel/events/core.c: perf_swevent_init_hrtimer), so every
// sample on every CPU is exactly this long. 0 when sampling is off (frequency 0).
uint64_t cpu_clock_period_ns(uint64_t frequency_hz);

// samples × period, in seconds: CPU time summed over CPUs.
double cpu_clock_seconds(uint64_t samples, uint64_t frequency_hz);

}  // namespace hucprof
