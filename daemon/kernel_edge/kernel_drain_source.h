#pragma once
#include <cstdint>
#include <optional>

#include "core/drain/drain_source.h"

namespace hucprof {

class ProbeSession;
class SamplingSession;
class ProgramBarrier;
class CgroupWorkloads;
class CgroupNamesSession;

// A drain's counts from the kernel: the sessions' BPF maps, a generation at a time, and the
// cgroups the kernel reported made and removed since the last drain. Every pointer may be null
// (that part is off) except the barrier; all outlive this.
class KernelDrainSource final : public DrainSource {
 public:
  KernelDrainSource(ProbeSession* probes, SamplingSession* sampler, ProgramBarrier& barrier,
                    CgroupWorkloads* workloads, CgroupNamesSession* cgroup_names);

  RawDrain read() override;
  WorkloadNames* workloads() override;
  void named() override;
  std::optional<uint64_t> busy_cpu_ns() override;

 private:
  ProbeSession* probes_;
  SamplingSession* sampler_;
  ProgramBarrier& barrier_;
  CgroupWorkloads* workloads_;
  CgroupNamesSession* cgroup_names_;
  uint64_t cgroup_events_lost_ = 0;  // lost() at the last read
};

}  // namespace hucprof
