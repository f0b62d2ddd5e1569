#pragma once
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <string>

#include "app/kernel_view.h"
#include "cli/options.h"
#include "core/base/result.h"
#include "core/drain/drain_gate.h"
#include "core/profile/profile_store.h"
#include "hucprof.pb.h"

namespace hucprof {

class ProbeSession;
class SamplingSession;
class ProgramBarrier;
class KallsymsSymbolizer;
class KernelDebuginfo;
class SourceSymbolizer;
class CgroupWorkloads;
class CgroupNamesSession;
class DrainStep;
class KernelDrainSource;

// What `hucprof run` and `hucprof record` share: carry out the attach plan for --mode on this
// kernel, then drain the BPF maps (KernelDrainSource) through the DrainStep into the metrics
// and the profile store (stacks). Drains are serialized, so a profile request may drain from
// its own thread between the periodic ones.
class ProfilingPipeline {
 public:
  // Takes the kernel's kallsyms (the symbolizer keeps it). The error: why what attached is not
  // enough to run (exit 1).
  static Result<std::unique_ptr<ProfilingPipeline>> start(const RunOptions& options,
                                                          KernelView& kernel);
  ~ProfilingPipeline();

  // Called with every new snapshot, in drain order (under the drain lock, so a profile
  // request's drain and a periodic one never publish out of order: counters only grow).
  void publish_to(std::function<void(const hucprof::v1::Snapshot&)> publish);

  // One drain: retire the BPF maps' generation, read it, fold it, add it up. end_interval: a
  // periodic drain, which closes the profile store's interval. settle: first wait (a few
  // seconds at most) for the debuginfo lookups still out, and let nothing be held for them:
  // for the drains a recording starts and ends with.
  void drain(bool end_interval, bool settle = false);
  hucprof::v1::Snapshot latest() const;
  // SIGHUP: --top-k changed.
  void set_top_k(uint32_t top_k);

  ProfileStore& profiles();
  // For work beside the drain loop (profile requests, the web view): returns once no drain runs.
  void wait_while_draining() { gate_.wait_while_draining(); }
  bool probes_on() const { return probes_ != nullptr; }
  bool sampling_on() const { return sampler_ != nullptr; }

 private:
  ProfilingPipeline() = default;
  void drain_locked(bool end_interval, bool settle);
  // The kernel's reports of cgroups made and removed, so that one that ends before the drain
  // keeps its name; without them (refused: the reason is logged), walks only.
  void follow_cgroups();

  mutable std::mutex mutex_;  // one drain at a time; guards the pieces below and latest_
  DrainGate gate_;
  std::unique_ptr<ProbeSession> probes_;
  std::unique_ptr<SamplingSession> sampler_;
  std::unique_ptr<ProgramBarrier> barrier_;
  std::unique_ptr<KallsymsSymbolizer> symbolizer_;
  // With the kernel's debuginfo (found, or on its way from debuginfod): frames get their inline
  // calls and source lines, call sites their copy functions.
  std::unique_ptr<KernelDebuginfo> debuginfo_;
  std::unique_ptr<SourceSymbolizer> sources_;
  // Names the cgroup of every sample's task, and of every probed check's with
  // --probe.workloads (which workload pays).
  std::unique_ptr<CgroupWorkloads> workloads_;
  std::unique_ptr<CgroupNamesSession> cgroup_names_;
  std::unique_ptr<KernelDrainSource> source_;
  std::unique_ptr<DrainStep> step_;
  hucprof::v1::Snapshot latest_;
  std::function<void(const hucprof::v1::Snapshot&)> publish_;
};

}  // namespace hucprof
