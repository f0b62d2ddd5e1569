#pragma once
#include <cstdint>
#include <optional>

#include "core/drain/raw_drain.h"
#include "core/workload/workload_names.h"

namespace hucprof {

// Where a drain's counts come from (core/pipeline/drain_step.h): the kernel's BPF maps in the
// daemon (kernel_edge/kernel_drain_source.h), a synthetic kernel in the unit tests and benchmarks.
class DrainSource {
 public:
  virtual ~DrainSource() = default;
  // Retires the generation the programs count into and reads it whole: what they counted since
  // the last read. The cgroups its keys name are known to workloads() by then.
  virtual RawDrain read() = 0;
  // Names the cgroups of what read() returned; nullptr when nothing is keyed by cgroup.
  virtual WorkloadNames* workloads() { return nullptr; }
  // The drain named what it read: a cgroup gone since may be forgotten.
  virtual void named() {}
  // The machine's busy CPU time since boot (/proc/stat), ns; nullopt when unreadable.
  virtual std::optional<uint64_t> busy_cpu_ns() { return std::nullopt; }
};

}  // namespace hucprof
