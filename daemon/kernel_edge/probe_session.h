#pragma once
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "core/drain/raw_drain.h"
#include "core/kernel/attach_plan.h"
#include "core/kernel/target_status.h"
#include "kernel_edge/libbpf_ptr.h"

struct probe_bpf;

namespace hucprof {

// Probe mode's kernel side: carries out the attach plan (loads probe.bpf.c with only the programs
// the plan attaches, sizes its maps, attaches) and reads its maps. What to do when the kernel
// refuses a program is decided in daemon/core (degrade_subchecks); this only finds out which
// program it was. Owns every libbpf object it creates.
class ProbeSession {
 public:
  // The plan's programs in the kernel, not attached yet: what `doctor` reports (and unloads) and
  // what `run` attaches. One path for both, so they cannot disagree.
  struct Loaded {
    std::unique_ptr<ProbeSession> session;  // null when __check_object_size's program did not load
    AttachPlan plan;                        // as loaded: sub-checks degraded where refused
    std::map<size_t, std::string> refused;  // target index (in plan) -> why its program was refused
    std::string error;                      // why nothing loaded
  };
  static Loaded load(const AttachPlan& plan);

  struct Started {
    std::unique_ptr<ProbeSession> session;  // null when __check_object_size is not attached
    AttachPlan plan;                        // the plan that was carried out (Loaded::plan)
    std::vector<TargetStatus> statuses;     // one per planned target, attached or why not
    std::string error;  // set when the object could not be opened or loaded at all
  };
  static Started attach(Loaded loaded);
  static Started start(const AttachPlan& plan) { return attach(load(plan)); }

  // What each target of a load will be: attached as planned (when `attached`), or why not.
  static std::vector<TargetStatus> statuses_of(const Loaded& loaded);

  ~ProbeSession();
  ProbeSession(const ProbeSession&) = delete;
  ProbeSession& operator=(const ProbeSession&) = delete;

  // Whether the kernel counts the checks it skips the check's program for
  // (core/drain/missed_runs.h), and if not why: what `doctor` says.
  MissedCoverage check_misses_coverage() const;

  // From now on the programs count into the next generation (hucprof_abi.h).
  void retire_generation();
  // Reads and deletes every key and stack of retired generations. Only after ProgramBarrier::wait
  // following retire_generation: then no program still writes them.
  void drain(RawDrain& out);

 private:
  ProbeSession() = default;
  void drain_site_tables(RawDrain& out) const;
  void name_slab_caches(RawDrain& out);
  // An attached program, for the runs of it the kernel skipped.
  struct Attached {
    const bpf_program* program = nullptr;
    TargetProgram role = TargetProgram::Check;
    Flavour flavour = Flavour::Fentry;
    const bpf_link* link = nullptr;  // owned by links_; null before attach
  };
  RawMisses misses_of(const Attached& a) const;
  void add_misses(RawDrain& out) const;
  probe_bpf* skel_ = nullptr;
  std::vector<BpfLinkPtr> links_;
  std::vector<Attached> attached_;
  Attached check_;       // the check's program, loaded
  bool rescue_ = false;  // the rescue program is attached
  // The kernel counts a kprobe's skips: the kprobe's own (link info) and its program's while
  // another BPF program runs on the CPU (recursion_misses), 6.7+.
  bool kprobe_skips_counted_ = false;
  int possible_cpus_ = 1;
  bool latency_ = false;
  ProbeBuild build_ = ProbeBuild::HelperReads;  // which build of probe.bpf.c is loaded
  // The generation sequence the programs count in; keys carry its low byte.
  uint32_t seq_ = 0;
  // Slab cache names by kmem_cache address, read once per address (a cache lives as long as
  // the kernel's users of it, which outlive a profiling session for every cache copied from).
  std::map<uint64_t, std::string> slab_cache_names_;
};

}  // namespace hucprof
