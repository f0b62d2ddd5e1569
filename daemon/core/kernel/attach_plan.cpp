#include "core/kernel/attach_plan.h"

#include <algorithm>
#include <utility>

namespace hucprof {
namespace {

constexpr std::string_view kNoSymbol = "not a real symbol on this kernel (inlined or not built in)";

struct SymbolChoice {
  std::string name;
  std::string reason;
};

bool is_cold_part(std::string_view name) { return name.find(".cold") != std::string_view::npos; }

// The exact name to attach to. The function itself when it exists; else a compiler clone of it
// (`.part.N`, `.isra.N`, `.constprop.N`), never a `.cold` part: that is the unlikely branch split
// off a function, entered by a jump from it, not a call.
SymbolChoice choose_symbol(const KallsymsIndex& kallsyms, std::string_view symbol) {
  if (kallsyms.find_exact(symbol)) return {std::string(symbol), "the function itself"};
  std::vector<std::string> clones;
  bool cold_only = false;
  for (const auto& sym : kallsyms.find_normalized(symbol)) {
    if (is_cold_part(sym.name)) {
      cold_only = true;
    } else {
      clones.push_back(sym.name);
    }
  }
  if (clones.empty()) {
    return {"", cold_only ? "only its .cold part is a symbol (entered by a jump, not a call): "
                            "not probed"
                          : std::string(kNoSymbol)};
  }
  std::sort(clones.begin(), clones.end());  // several clones: the same pick on every run
  std::string reason = "the compiler's clone of it (the function itself is not a symbol)";
  if (clones.front().find(".part.") != std::string::npos) {
    reason =
        "the compiler's .part clone (the function was split and its head inlined into "
        "callers: only calls that reach this part are seen)";
  }
  return {clones.front(), reason};
}

bool probes_wanted(const AttachFacts& facts, const AttachOptions& options) {
  return options.mode != Mode::Sample && facts.hardened.enabled;
}

std::string probes_off_reason(const AttachFacts& facts, const AttachOptions& options) {
  if (options.mode == Mode::Sample) return "not tried: --mode sample";
  return "the hardened usercopy checks are off on this kernel (" + facts.hardened.reason + ")";
}

// Direct reads (the bpf_rdonly_cast kfunc) only where they have run: x86_64 (arch_reads.bpf.h).
#if defined(__x86_64__)
constexpr bool kDirectReadsHere = true;
#else
constexpr bool kDirectReadsHere = false;
#endif

BpfProgram program_of(Flavour flavour) {
  return flavour == Flavour::Fentry ? BpfProgram::Fentry : BpfProgram::Kprobe;
}

// What keeps every build of the probe object from running programs of `program` here: "" when
// one build has all it needs, else the features the closest build lacks, in words.
std::string probe_feature_gap(const AttachFacts& facts, BpfProgram program) {
  std::vector<BpfFeature> fewest;
  for (ProbeBuild build : {ProbeBuild::HelperReads, ProbeBuild::Compat}) {
    std::vector<BpfFeature> gap = facts.kernel.bpf_features.missing_of(probe_needs(build, program));
    if (gap.empty()) return "";
    if (fewest.empty() || gap.size() < fewest.size()) fewest = std::move(gap);
  }
  return std::string("hucprof's ") + bpf_program_name(program) + " programs need " +
         feature_list_words(fewest) + ", which this kernel lacks";
}

bool fentry_possible(const AttachFacts& facts, const AttachOptions& options) {
  return probes_wanted(facts, options) && options.probe_attach != ProbeAttach::Kprobe &&
         facts.kernel.btf.ok && probe_feature_gap(facts, BpfProgram::Fentry).empty();
}

// Fentry where the kernel took a test program (a trampoline costs less than a kprobe's
// breakpoint), else kprobe; --probe.attach forces one.
void choose_flavour(TargetPlan& plan, const AttachFacts& facts, const AttachOptions& options) {
  std::string fentry_why;
  if (options.probe_attach == ProbeAttach::Kprobe) {
    fentry_why = "not tried (--probe.attach kprobe)";
  } else if (!facts.kernel.btf.ok) {
    fentry_why = facts.kernel.btf.detail;
  } else if (std::string gap = probe_feature_gap(facts, BpfProgram::Fentry); !gap.empty()) {
    fentry_why = gap;
  } else if (auto it = facts.fentry_errors.find(plan.symbol); it == facts.fentry_errors.end()) {
    fentry_why = "not probed";
  } else if (it->second.empty()) {
    plan.flavour = Flavour::Fentry;
    plan.reason = options.probe_attach == ProbeAttach::Fentry
                      ? "fentry (--probe.attach fentry): the kernel took a test fentry program"
                      : "fentry: the kernel took a test fentry program here";
    return;
  } else {
    fentry_why = it->second;
  }
  std::string kprobe_why;
  if (options.probe_attach == ProbeAttach::Fentry) {
    kprobe_why = "not tried (--probe.attach fentry)";
  } else if (std::string gap = probe_feature_gap(facts, BpfProgram::Kprobe);
             facts.kernel.kprobes.ok && !gap.empty()) {
    kprobe_why = gap;
  } else if (facts.kernel.kprobes.ok) {
    plan.flavour = Flavour::Kprobe;
    plan.reason = options.probe_attach == ProbeAttach::Kprobe
                      ? "kprobe (--probe.attach kprobe)"
                      : "kprobe, as fentry is refused: " + fentry_why;
    return;
  } else {
    kprobe_why = facts.kernel.kprobes.detail;
  }
  plan.reason = "fentry: " + fentry_why + "; kprobe: " + kprobe_why;
}

// The sub-checks the check's program can classify from the object's address
// (bpf/usercopy_classify.bpf.h); check_heap_object and check_kernel_text_object are real functions
// on no kernel we know, and stay probed where they are.
bool is_classified(const ProbeTarget& target) {
  switch (target.program) {
    case TargetProgram::Slab:
    case TargetProgram::Vmalloc:
    case TargetProgram::Page:
    case TargetProgram::Stack:
      return true;
    default:
      return false;
  }
}

// The first build of the probe object whose needs the kernel meets for every flavour the plan
// attaches, and why not the better ones. Direct reads only where the kernel says it has the kfunc
// (an unanswered probe is not enough for the one build that is never needed).
void choose_probe_build(AttachPlan& plan, const AttachFacts& facts) {
  std::vector<BpfProgram> programs;
  for (const TargetPlan& t : plan.targets) {
    const BpfProgram p = program_of(t.flavour);
    if (t.attaches() && std::find(programs.begin(), programs.end(), p) == programs.end()) {
      programs.push_back(p);
    }
  }
  std::string why_not;
  for (ProbeBuild build : {ProbeBuild::DirectReads, ProbeBuild::HelperReads, ProbeBuild::Compat}) {
    std::string gap_words;
    if (build == ProbeBuild::DirectReads && !kDirectReadsHere) {
      gap_words = "x86_64 (its direct reads have not run elsewhere)";
    } else if (build == ProbeBuild::DirectReads &&
               !facts.kernel.bpf_features.present(rdonly_cast_feature())) {
      gap_words = rdonly_cast_feature().words();
    } else {
      std::vector<BpfFeature> gap;
      for (BpfProgram p : programs) {
        for (BpfFeature& f : facts.kernel.bpf_features.missing_of(probe_needs(build, p))) {
          gap.push_back(std::move(f));
        }
      }
      gap_words = feature_list_words(gap);
    }
    if (gap_words.empty() || build == ProbeBuild::Compat) {
      // Compat last: probe_feature_gap left out every flavour no build can run.
      plan.probe_build = build;
      plan.probe_build_reason =
          std::string(probe_build_name(build)) + (why_not.empty() ? "" : " (" + why_not + ")");
      return;
    }
    if (!why_not.empty()) why_not += "; ";
    why_not += std::string(probe_build_name(build)) + " needs " + gap_words;
  }
}

// The sampler's build: bpf_loop's where the kernel has what it needs, else the compat build
// (the same samples); none when even that one lacks something.
void choose_sampler_build(AttachPlan& plan, const AttachFacts& facts) {
  const std::vector<BpfFeature> loop_gap =
      facts.kernel.bpf_features.missing_of(sampler_needs(SamplerBuild::Loop));
  if (loop_gap.empty()) {
    plan.sampler_build = SamplerBuild::Loop;
    plan.sampler_build_reason = "sampler (stack scan under bpf_loop, the task read through BTF)";
    return;
  }
  const std::vector<BpfFeature> compat_gap =
      facts.kernel.bpf_features.missing_of(sampler_needs(SamplerBuild::Compat));
  if (!compat_gap.empty()) {
    plan.sampling = false;
    plan.sampling_reason =
        "the sampler needs " + feature_list_words(compat_gap) + ", which this kernel lacks";
    return;
  }
  plan.sampler_build = SamplerBuild::Compat;
  plan.sampler_build_reason =
      "sampler_compat (a bounded stack scan, the task read by helper calls; the same samples): "
      "this kernel lacks " +
      feature_list_words(loop_gap);
  if (!facts.task_stack_size) {
    plan.sampler_build_reason +=
        "; syscall numbers unknown: kallsyms has no __start_init_task/__end_init_task, which give "
        "the task stack's size (CONFIG_KALLSYMS_ALL off?)";
  }
}

std::vector<std::string_view> views_of(const std::vector<std::string>& names) {
  return {names.begin(), names.end()};
}

// The map and per-CPU state the sub-check programs the plan attaches need.
void settle_subcheck_programs(AttachPlan& plan) {
  const bool subcheck_programs =
      std::any_of(plan.targets.begin(), plan.targets.end(), [](const TargetPlan& t) {
        return t.attaches() && !t.target.is_check() &&
               t.target.program != TargetProgram::CheckReturn;
      });
  plan.maps.subcheck_keys = subcheck_programs ? plan.maps.max_keys : 1;
  // The only programs that run after the check: probed sub-checks, and its exit with --latency.
  plan.check_leaves_state = subcheck_programs || plan.maps.latency;
}

}  // namespace

const char* flavour_name(Flavour flavour) {
  switch (flavour) {
    case Flavour::Fentry:
      return "fentry";
    case Flavour::Kprobe:
      return "kprobe";
    case Flavour::None:
      break;
  }
  return "";
}

const char* subcheck_method_name(SubcheckMethod method) {
  switch (method) {
    case SubcheckMethod::Classified:
      return "classified";
    case SubcheckMethod::Probed:
      return "probed";
    case SubcheckMethod::NotCounted:
      break;
  }
  return "not counted";
}

const TargetPlan& AttachPlan::check() const {
  auto it = std::find_if(targets.begin(), targets.end(),
                         [](const TargetPlan& t) { return t.target.is_check(); });
  return *it;  // compute_attach_plan always plans the check first
}

std::vector<std::string> fentry_candidates(const KallsymsIndex& kallsyms, const AttachFacts& facts,
                                           const AttachOptions& options) {
  std::vector<std::string> names;
  if (!fentry_possible(facts, options)) return names;
  for (const ProbeTarget& target : probe_targets()) {
    if (auto choice = choose_symbol(kallsyms, target.symbol); !choice.name.empty()) {
      names.push_back(std::move(choice.name));
    }
  }
  return names;
}

namespace {

// A kprobe's program runs with preemption off (and is skipped for another reason, counted), so
// only an fentry check's run can be held by a preempted task; the rescue costs a second program
// run per check, so only where preemption can hold one. Every build of the probe object has it,
// reading the task as that build's check's program does (probe.bpf.c), so it needs no feature the
// chosen build does not: the build never keeps it off.
void decide_rescue(AttachPlan& plan, const AttachFacts& facts, bool wanted) {
  if (!plan.probes) return;
  const Preemption& preemption = facts.kernel.preemption;
  const std::string why = "preemption " + preemption.model + ", from " + preemption.reason;
  if (!wanted) {
    plan.rescue_reason = "no rescue program: --probe.rescue off";
  } else if (plan.check().flavour != Flavour::Fentry) {
    plan.rescue_reason = "no rescue program: a kprobe's program runs with preemption off";
  } else if (!preemption.programs_preemptible) {
    plan.rescue_reason =
        "no rescue program: a run of the check's program is never preempted here (" + why + ")";
  } else {
    plan.rescue = true;
    plan.rescue_reason =
        "rescue program on: a run of the check's program can be preempted here (" + why + ")";
    if (plan.probe_build == ProbeBuild::Compat) {
      plan.rescue_reason += "; probe_compat's reads the task by helper calls, as its check does";
    }
  }
}

}  // namespace

AttachPlan compute_attach_plan(const KallsymsIndex& kallsyms, const AttachFacts& facts,
                               const AttachOptions& options) {
  AttachPlan plan;
  const bool wanted = probes_wanted(facts, options);
  const bool classify_asked = options.subchecks == SubcheckCounting::Classify;
  const ClassifierReadiness readiness =
      classify_asked ? classifier_readiness(facts.page_layout, facts.slab_marker)
                     : ClassifierReadiness{};
  // What the check's program needs to classify, found once its flavour is known.
  std::vector<BpfFeature> classify_gap;
  bool classify = false;
  if (!wanted) plan.probes_not_tried = probes_off_reason(facts, options);
  bool check_attaches = false;
  for (const ProbeTarget& target : probe_targets()) {
    TargetPlan t{target, "", "", Flavour::None, "", Flavour::None, ""};
    SymbolChoice choice = choose_symbol(kallsyms, target.symbol);
    t.symbol = std::move(choice.name);
    t.symbol_reason = std::move(choice.reason);
    if (!wanted) {
      t.reason = plan.probes_not_tried;
    } else if (t.symbol.empty()) {
      t.reason = t.symbol_reason;
    } else if (!target.is_check() && !check_attaches) {
      t.reason =
          "not tried: __check_object_size is not attached (sub-checks are counted inside it)";
    } else {
      choose_flavour(t, facts, options);
      if (classify && is_classified(target)) {
        t.probed_flavour = std::exchange(t.flavour, Flavour::None);
        t.probed_reason = std::exchange(t.reason, kClassifiedReason);
      }
    }
    if (target.is_check()) {
      check_attaches = t.attaches();
      if (check_attaches) {
        classify_gap = facts.kernel.bpf_features.missing_of(classify_needs(program_of(t.flavour)));
      }
      classify = classify_asked && facts.slab_marker.known() && readiness.ok &&
                 facts.kernel.syscall_programs.ok && classify_gap.empty();
    }
    plan.targets.push_back(std::move(t));
  }
  if (options.latency && check_attaches) {
    const TargetPlan& check = plan.targets.front();
    plan.targets.push_back({kCheckReturnTarget, check.symbol, check.symbol_reason, check.flavour,
                            check.flavour == Flavour::Fentry ? "fexit, as the entry is fentry"
                                                             : "kretprobe, as the entry is kprobe",
                            Flavour::None, ""});
  }
  plan.probes = check_attaches;
  if (check_attaches && classify) {
    plan.subchecks = SubcheckMethod::Classified;
    plan.slab_marker = facts.slab_marker;
    plan.compound_info_mask = readiness.compound_info_mask;
    plan.subchecks_reason =
        "classified inside __check_object_size's probe (slab pages: " + facts.slab_marker.detail +
        "; " + readiness.detail + ")";
  } else if (check_attaches) {
    plan.subchecks = SubcheckMethod::Probed;
    plan.subchecks_reason =
        !classify_asked ? "sub-check functions probed (--probe.subchecks attach)"
        : !facts.slab_marker.known()
            ? "sub-check functions probed instead of classified: the kernel BTF does not say how "
              "a page is marked slab (" +
                  facts.slab_marker.detail + ")"
        : !readiness.ok ? "sub-check functions probed instead of classified: " + readiness.detail
                        : "sub-check functions probed instead of classified: " +
                              facts.kernel.syscall_programs.detail;
  }

  plan.dispatcher_ranges = build_address_ranges(kallsyms, dispatcher_symbols());
  if (plan.probes) {
    plan.helper_ranges =
        build_address_ranges(kallsyms, views_of(options.helper_symbols), HUC_MAX_HELPER_RANGES);
  }

  if (options.mode == Mode::Probe) {
    plan.sampling_reason = "not tried: --mode probe";
  } else if (!facts.kernel.perf_events.ok) {
    plan.sampling_reason = facts.kernel.perf_events.detail;
  } else if (!facts.kernel.btf.ok) {
    plan.sampling_reason = facts.kernel.btf.detail;
  } else if (plan.dispatcher_ranges.ranges.empty()) {
    plan.sampling_reason =
        "no usercopy check function in /proc/kallsyms (is CONFIG_HARDENED_USERCOPY off, or are "
        "addresses hidden?)";
  } else {
    plan.sampling = true;
  }
  if (plan.sampling) choose_sampler_build(plan, facts);
  if (plan.sampling) plan.interrupt_ranges = build_interrupt_ranges(kallsyms);
  if (plan.probes) choose_probe_build(plan, facts);
  plan.task_stack_size = static_cast<uint32_t>(facts.task_stack_size);
  plan.follow = options.follow;
  plan.sample_pids = options.label_pids && plan.sampling;
  plan.probe_workloads = options.probe_workloads && plan.probes;
  plan.objects = options.objects && plan.probes;
  decide_rescue(plan, facts, options.rescue);

  plan.maps.max_keys = options.max_keys;
  plan.maps.max_stacks = options.max_stacks;
  plan.maps.latency = options.latency && plan.probes;
  settle_subcheck_programs(plan);
  plan.maps.stacks_on_demand = facts.kernel.on_demand_maps.ok;
  plan.maps.stacks_reason = facts.kernel.on_demand_maps.ok
                                ? "allocated on use: " + facts.kernel.on_demand_maps.detail
                                : "preallocated: " + facts.kernel.on_demand_maps.detail;
  return plan;
}

std::optional<AttachPlan> degrade_subchecks(const AttachPlan& plan, const std::string& why) {
  AttachPlan lower = plan;
  switch (plan.subchecks) {
    case SubcheckMethod::NotCounted:
      return std::nullopt;
    case SubcheckMethod::Classified:
      lower.subchecks = SubcheckMethod::Probed;
      lower.slab_marker = {};
      lower.compound_info_mask = false;
      lower.subchecks_reason =
          "sub-check functions probed instead of classified: the kernel refused the classifying "
          "program: " +
          why;
      for (TargetPlan& t : lower.targets) {
        if (t.reason != kClassifiedReason) continue;
        t.flavour = std::exchange(t.probed_flavour, Flavour::None);
        t.reason = std::exchange(t.probed_reason, "");
      }
      break;
    case SubcheckMethod::Probed:
      lower.subchecks = SubcheckMethod::NotCounted;
      lower.subchecks_reason =
          "sub-checks not counted: the kernel refused the probes with them: " + why;
      for (TargetPlan& t : lower.targets) {
        if (t.target.is_check() || t.target.program == TargetProgram::CheckReturn) continue;
        if (!t.attaches()) continue;
        t.flavour = Flavour::None;
        t.reason = "not attached: " + lower.subchecks_reason;
      }
      break;
  }
  settle_subcheck_programs(lower);
  return lower;
}

AttachOutcome planned_outcome(const AttachPlan& plan) {
  AttachOutcome out;
  const TargetPlan& check = plan.check();
  out.probes = plan.probes;
  out.check_flavour = check.flavour;
  out.subchecks = plan.subchecks;
  if (!out.probes) out.probe_failure = "__check_object_size: " + check.reason;
  out.sampling = plan.sampling;
  out.sampling_failure = plan.sampling_reason;
  return out;
}

Verdict judge(Mode mode, const HardenedUsercopyState& hardened, const AttachOutcome& outcome) {
  // With the checks off nothing is probed on purpose (nothing would run under the probes):
  // not a failure, the daemon serves usercopy_hardened_enabled 0.
  const std::string probes = outcome.probes
                                 ? std::string("on (") + flavour_name(outcome.check_flavour) +
                                       "), sub-checks " + subcheck_method_name(outcome.subchecks)
                             : hardened.enabled ? "off"
                                                : "off (the checks are off on this kernel)";
  const std::string sampling = outcome.sampling ? "on" : "off";
  switch (mode) {
    case Mode::Probe:
      if (!outcome.probes && hardened.enabled) {
        return {false, "--mode probe: no probe could attach: " + outcome.probe_failure};
      }
      return {true, "probes " + probes};
    case Mode::Sample:
      if (!outcome.sampling) {
        return {false, "--mode sample: sampling unavailable: " + outcome.sampling_failure};
      }
      return {true, "sampling on"};
    case Mode::Auto:
      if (!outcome.probes && !outcome.sampling && hardened.enabled) {
        return {false, "--mode auto: neither probes (" + outcome.probe_failure +
                           ") nor sampling (" + outcome.sampling_failure + ") are available"};
      }
      return {true, "sampling " + sampling + ", probes " + probes};
  }
  return {false, "unknown mode"};
}

}  // namespace hucprof
