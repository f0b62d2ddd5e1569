#pragma once
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "core/drain/missed_runs.h"
#include "core/drain/raw_drain.h"
#include "core/drain/skipped_samples.h"
#include "core/kernel/attach_plan.h"
#include "kernel_edge/libbpf_ptr.h"

struct sampler_bpf;

namespace hucprof {

// Sampling mode's kernel side: the perf_event CPU-clock program on every online CPU, with the
// check dispatchers' address ranges and the map sizes of the attach plan handed in before load.
class SamplingSession {
 public:
  // The sampler program in the kernel, not attached to any CPU yet: what `doctor` reports (and
  // unloads) and what `run` attaches, one path for both.
  struct Loaded {
    std::unique_ptr<SamplingSession> session;
    std::string error;  // why it is not loaded, in words
  };
  static Loaded load(const AttachPlan& plan);

  struct Started {
    std::unique_ptr<SamplingSession> session;
    std::string error;  // why sampling is unavailable, in words
    size_t cpus = 0;    // CPUs sampled
    // The shortest and longest of the CPUs' periods (core/kernel/cpu_time.h).
    uint64_t min_period_ns = 0;
    uint64_t max_period_ns = 0;
  };
  static Started attach(Loaded loaded, uint32_t frequency_hz);
  static Started start(uint32_t frequency_hz, const AttachPlan& plan) {
    return attach(load(plan), frequency_hz);
  }

  ~SamplingSession();
  SamplingSession(const SamplingSession&) = delete;
  SamplingSession& operator=(const SamplingSession&) = delete;

  // Whether the samples the kernel skips are counted (core/drain/missed_runs.h), and if not why:
  // what `doctor` says. It reads what a drain counts them from; loaded, not attached, that is the
  // program's runs alone (the events, and their counts, come with the attach).
  MissedCoverage sample_misses_coverage() const;

  // From now on the program counts into the next generation (hucprof_abi.h).
  void retire_generation();
  // Reads and deletes every key and stack of retired generations. Only after ProgramBarrier::wait
  // following retire_generation.
  void drain(RawDrain& out);

 private:
  SamplingSession() = default;
  // Every CPU's event count and program runs, nullopt when one cannot be read.
  std::optional<std::vector<SampledCpu>> read_sampled_cpus() const;
  sampler_bpf* skel_ = nullptr;
  std::vector<BpfLinkPtr> links_;  // each owns its perf event fd
  struct Event {
    int cpu = 0;
    int fd = -1;  // owned by its link
    uint64_t period_ns = 0;
  };
  std::vector<Event> events_;
  std::optional<SkippedSamples> skipped_;  // from attach on
  int possible_cpus_ = 1;
  std::vector<int> cpus_;  // `record -C`: the CPUs sampled; empty: every online CPU
  uint8_t generation_ = 0;
};

}  // namespace hucprof
