#include "kernel_edge/kernel_drain_source.h"

#include <spdlog/spdlog.h>

#include "core/kernel/proc_stat.h"
#include "kernel_edge/cgroup_names_session.h"
#include "kernel_edge/probe_session.h"
#include "kernel_edge/program_barrier.h"
#include "kernel_edge/program_stats.h"
#include "kernel_edge/sampling_session.h"
#include "workload/cgroup_workloads.h"

namespace hucprof {

KernelDrainSource::KernelDrainSource(ProbeSession* probes, SamplingSession* sampler,
                                     ProgramBarrier& barrier, CgroupWorkloads* workloads,
                                     CgroupNamesSession* cgroup_names)
    : probes_(probes),
      sampler_(sampler),
      barrier_(barrier),
      workloads_(workloads),
      cgroup_names_(cgroup_names) {}

RawDrain KernelDrainSource::read() {
  RawDrain raw;
  // New counts go to a new generation; once no program writes the old one, it is read and
  // deleted (hucprof_abi.h), so the maps never fill up over a long run.
  if (probes_) probes_->retire_generation();
  if (sampler_) sampler_->retire_generation();
  if (probes_ || sampler_) barrier_.wait();
  // First: the sessions ask the kernel for their programs' run counts only while it counts.
  raw.program_costs.stats = read_bpf_stats_enabled();
  if (probes_) probes_->drain(raw);
  if (sampler_) sampler_->drain(raw);
  // After the samples: every cgroup they name was made (and reported) before them.
  if (cgroup_names_) {
    workloads_->apply(cgroup_names_->read());
    cgroup_names_->add_costs(raw);
    if (const uint64_t lost = cgroup_names_->lost(); lost > cgroup_events_lost_) {
      spdlog::warn(
          "workloads: {} cgroup changes found the ring buffer full; cgroups made and "
          "removed since the last drain may be [unknown]",
          lost - cgroup_events_lost_);
      cgroup_events_lost_ = lost;
    }
  }
  barrier_.add_map_memory(raw.map_memory);
  return raw;
}

WorkloadNames* KernelDrainSource::workloads() { return workloads_; }

void KernelDrainSource::named() {
  if (workloads_) workloads_->end_drain();
}

std::optional<uint64_t> KernelDrainSource::busy_cpu_ns() { return read_busy_cpu_ns(); }

}  // namespace hucprof
