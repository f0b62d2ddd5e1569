#pragma once
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "core/kernel/attach_options.h"
#include "core/kernel/hardened_state.h"
#include "core/kernel/interrupt_entries.h"
#include "core/kernel/kernel_support.h"
#include "core/kernel/page_layout.h"
#include "core/kernel/probe_targets.h"
#include "core/kernel/slab_marker.h"
#include "core/symbols/address_ranges.h"
#include "core/symbols/kallsyms_index.h"

namespace hucprof {

// What the kernel edge found out about the running kernel, as plain data: daemon/kernel_edge fills
// it, unit tests write it for kernels we do not run on.
struct AttachFacts {
  KernelSupport kernel;  // handed over whole from KernelFacts::support
  HardenedUsercopyState hardened;
  // Exact symbol → "" when a do-nothing fentry program loaded and attached there, else why not.
  // The edge probes exactly the names fentry_candidates() returns.
  std::map<std::string, std::string> fentry_errors;
  // What sub-check classification needs: how slab pages are marked and the fields it reads
  // (read from BTF only when classification is asked for).
  SlabMarker slab_marker;
  PageLayout page_layout;
  // THREAD_SIZE as kallsyms gives it (0: unknown): where the compat builds find a task's user
  // registers (bpf/usercopy_common.bpf.h).
  uint64_t task_stack_size = 0;
};

enum class Flavour { None, Fentry, Kprobe };

// Why a sub-check function is not probed with --probe.subchecks classify.
inline constexpr const char* kClassifiedReason =
    "counted inside __check_object_size's probe from the object's address "
    "(--probe.subchecks classify)";
// "fentry", "kprobe", "" for None: the mode label of hucprof_probe_attached.
const char* flavour_name(Flavour flavour);

struct TargetPlan {
  ProbeTarget target;
  std::string symbol;         // exact kallsyms name to attach to; "" when there is none
  std::string symbol_reason;  // why that name (or why none), in words
  Flavour flavour = Flavour::None;
  std::string reason;  // why this flavour; for None why the target is not attached
  // A classified sub-check: how its function is probed instead when the check's program cannot
  // classify after all (degrade_subchecks).
  Flavour probed_flavour = Flavour::None;
  std::string probed_reason;

  bool attaches() const { return flavour != Flavour::None; }
};

// How probe mode counts the sub-checks: inside the check's program, by a program at each
// sub-check function's entry, or not at all (no probes, or the kernel refused both ways).
enum class SubcheckMethod { NotCounted, Classified, Probed };
// "classified", "probed", "not counted": the words of the verdict, the log and
// hucprof_probe_subchecks_info.
const char* subcheck_method_name(SubcheckMethod method);

// How big each BPF map is. Counter maps hold the keys of one drain interval (the daemon deletes
// drained keys), stack maps the stacks those keys reference.
struct MapPlan {
  uint32_t max_keys = 0;
  // The sub-check map's: max_keys when a sub-check function is probed, else 1 (classified
  // sub-checks are counted in the sites map's values; a BPF map cannot have 0 entries).
  uint32_t subcheck_keys = 0;
  uint32_t max_stacks = 0;
  bool latency = false;           // the latency map exists at all (--latency with probes)
  bool stacks_on_demand = false;  // stack maps allocate entries on use (BPF_F_NO_PREALLOC)
  std::string stacks_reason;
};

// Everything `run` does and `doctor` reports about attaching, decided once from kernel facts
// and options. Pure: no libbpf, no files.
struct AttachPlan {
  bool probes = false;              // a probe session is started
  std::string probes_not_tried;     // why no target was even considered (--mode sample, checks off)
  std::vector<TargetPlan> targets;  // every probe target; with --latency also the check's exit
  bool sampling = false;            // a sampling session is started
  std::string sampling_reason;      // why not, when !sampling
  AddressRanges helper_ranges;      // copy helpers: their callers are looked through (probe)
  AddressRanges dispatcher_ranges;  // check dispatchers: sub-check filter (probe), sampler
  SubcheckMethod subchecks = SubcheckMethod::NotCounted;
  bool compound_info_mask = false;  // tail pages name their head by a mask (page_layout.h)
  // Sampling: interrupt entry code. A check the sampler finds above it was interrupted, and the
  // sample is kernel CPU, not the check's (bpf/kernel_ranges.h).
  InterruptRanges interrupt_ranges;
  FollowFilter follow;           // AttachOptions::follow, for both sessions
  bool sample_pids = false;      // sampling: AttachOptions::label_pids (the sampler's label_pids)
  bool probe_workloads = false;  // probes: AttachOptions::probe_workloads
  bool objects = false;          // probes: AttachOptions::objects, where sub-checks are classified
  // A program that runs after the check on the same CPU reads what the check left there (the
  // call site, the entry time): a probed sub-check function, or the check's exit (--latency).
  bool check_leaves_state = false;
  // The rescue program (fentry on the check, run after the check's program): it counts a check
  // whose run of the check's program the kernel skipped because a preempted run held it on the
  // CPU (docs/design.md, "Checks the program never saw"). Only where a run can be preempted.
  bool rescue = false;
  std::string rescue_reason;     // why or why not, in words
  SlabMarker slab_marker;        // what that program tests pages with
  std::string subchecks_reason;  // how sub-checks are counted, and why
  MapPlan maps;
  // Which build of each BPF object loads here (the first whose features the kernel has), and
  // why: what the better builds lack.
  SamplerBuild sampler_build = SamplerBuild::Loop;
  std::string sampler_build_reason;
  ProbeBuild probe_build = ProbeBuild::HelperReads;
  std::string probe_build_reason;
  uint32_t task_stack_size = 0;  // AttachFacts::task_stack_size, for the compat builds

  // The __check_object_size target (always present).
  const TargetPlan& check() const;
  // The check's program counts slab/vmalloc/page/stack itself.
  bool classifies() const { return subchecks == SubcheckMethod::Classified; }
  // Slab checks by cache: asked for, and the sub-checks classified where they are found.
  bool counts_objects() const { return objects && classifies(); }
};

// The exact symbols whose fentry support the edge must probe before compute_attach_plan (none
// when fentry cannot be chosen anyway: --mode sample, --probe.attach kprobe, no BTF, checks off).
std::vector<std::string> fentry_candidates(const KallsymsIndex& kallsyms, const AttachFacts& facts,
                                           const AttachOptions& options);

AttachPlan compute_attach_plan(const KallsymsIndex& kallsyms, const AttachFacts& facts,
                               const AttachOptions& options);

// The plan one sub-check level down, after the kernel refused the programs `plan` loads (`why`,
// in words): classified -> the sub-check functions probed -> sub-checks not counted, so that a
// refused feature costs only itself and never the check. nullopt when sub-checks are not counted
// already: then the check's own program was refused.
std::optional<AttachPlan> degrade_subchecks(const AttachPlan& plan, const std::string& why);

// What started (`run`) or loaded (`doctor`, which loads the very programs `run` would and unloads
// them), judged by the same rules: the two cannot disagree on a verdict. planned_outcome is the
// plan's own promise, before the kernel was asked.
struct AttachOutcome {
  bool probes = false;
  std::string probe_failure;  // why no probe session runs
  Flavour check_flavour = Flavour::None;
  SubcheckMethod subchecks = SubcheckMethod::NotCounted;
  bool sampling = false;
  std::string sampling_failure;  // why no sampling session runs
};
AttachOutcome planned_outcome(const AttachPlan& plan);

struct Verdict {
  bool runs = false;    // `run` keeps serving; false: it exits 1
  std::string summary;  // "sampling on, probes on (fentry), sub-checks classified", or why not
};
Verdict judge(Mode mode, const HardenedUsercopyState& hardened, const AttachOutcome& outcome);

}  // namespace hucprof
