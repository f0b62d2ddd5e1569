#pragma once
#include <cstdint>
#include <map>
#include <vector>

namespace hucprof {

// One sampled CPU at a drain, both cumulative since its event was enabled: the time its
// cpu-clock event counted (the event's own count, read from its fd) and the runs of the sampler
// program there (its per-CPU context counts and unfollowed runs, summed); and the period its
// event was opened with (each CPU's its own: core/kernel/cpu_time.h).
struct SampledCpu {
  int cpu = 0;
  uint64_t clock_ns = 0;
  uint64_t runs = 0;
  uint64_t period_ns = 0;
};

// Samples the kernel owed the sampler program and never ran it for: a cpu-clock event fires
// once per period of its own count (kernel/events/core.c, perf_swevent_hrtimer), so a CPU whose
// clock counted c ns owed c / period runs; the runs it did not get were skipped
// (bpf_overflow_handler while bpf_prog_active was held on the CPU) or never fired (a timer late
// by more than a period). No kernel counts them (docs/design.md, "Samples the program never
// saw"). Pure: the kernel edge reads both counts, this turns them into a cumulative count.
//
// The two reads are not one instant: a period that ended just before the clock was read may
// have its run just after, so one drain can see a CPU one run short that the next one sees
// complete. A counter cannot give that back, so a CPU's skips are what two successive drains
// agree on at least (the smaller shortfall of the two, none at the first), never less than
// already counted: exact, one drain late.
class SkippedSamples {
 public:
  // The samples skipped on every CPU since the first drain, summed; never decreases. A CPU
  // without a period (0) owes nothing.
  uint64_t update(const std::vector<SampledCpu>& cpus);

 private:
  struct Cpu {
    int64_t last = 0;      // owed less run at the last drain
    uint64_t counted = 0;  // skips counted so far
  };
  std::map<int, Cpu> cpus_;
  uint64_t total_ = 0;
};

}  // namespace hucprof
