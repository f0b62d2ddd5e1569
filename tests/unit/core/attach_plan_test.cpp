// The attach plan for the kernels hucprof is known to meet. Symbol sets are those of Debian's
// 6.1 and 6.12 packages (as the VM tier finds them) and of the 6.18 development kernel
// (tests/data/kallsyms_6.18_excerpt.txt); kernel facts are what those kernels answered.
#include "core/kernel/attach_plan.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <sstream>

namespace hucprof {
namespace {

KallsymsIndex index_of(const std::string& text) {
  std::istringstream in(text);
  return KallsymsIndex::parse(in);
}

// Debian 6.1 / 6.12: check_heap_object and check_kernel_text_object are inlined.
constexpr const char* kDebianKallsyms =
    "ffffffff81000000 T _stext\n"
    "ffffffff81216b98 t __check_object_size.cold\n"
    "ffffffff81216c00 t unrelated_cold_neighbour\n"
    "ffffffff8134a1b0 T __virt_addr_valid\n"
    "ffffffff8134a300 T after_virt\n"
    "ffffffff816240a0 T find_vmap_area\n"
    "ffffffff81624200 T after_vmap\n"
    "ffffffff81652460 T __check_heap_object\n"
    "ffffffff81652600 T after_heap\n"
    "ffffffff816c91e0 t check_stack_object\n"
    "ffffffff816c9250 T __check_object_size\n"
    "ffffffff816c9470 T after_check\n"
    "ffffffff81a00000 T simple_copy_to_iter\n"
    "ffffffff81a00100 T after_helper\n";

// struct page and task_struct as Debian 6.1's BTF has them.
PageLayout debian61_layout() {
  PageLayout layout;
  layout.flags = PageLayout::Flags::Word;
  layout.head_field = "compound_head";
  layout.page_type = true;
  layout.page_size = 64;
  layout.hugetlb_vmemmap_optimize = true;
  layout.task_stack = true;
  layout.task_pagefault_disabled = true;
  return layout;
}

// ... and as Debian's 7.3.4+deb13 (trixie-backports) has them: memdesc_flags_t flags, tail pages
// by compound_info, PGTY_slab = 245 in enum pagetype.
AttachFacts debian73_facts(AttachFacts f) {
  f.slab_marker = {245, -1, "PGTY_slab = 245 in enum pagetype"};
  f.page_layout.flags = PageLayout::Flags::Memdesc;
  f.page_layout.head_field = "compound_info";
  return f;
}

AttachFacts debian_facts(const KallsymsIndex& kallsyms) {
  AttachFacts f;
  f.kernel.btf = {true, "/sys/kernel/btf/vmlinux present"};
  f.kernel.kprobes = {true, "kprobe PMU present"};
  f.kernel.perf_events = {true, "perf_event_open(cpu-clock) works"};
  f.hardened = {true, "CONFIG_HARDENED_USERCOPY=y, default on, no boot parameter"};
  f.kernel.on_demand_maps = {true, "the kernel allocates hash map entries on use (bpf_mem_alloc)"};
  f.slab_marker = {-1, 9, "PG_slab = 9 in enum pageflags"};  // Debian 6.1's BTF
  f.page_layout = debian61_layout();
  f.kernel.syscall_programs = {true, "the kernel runs syscall programs"};
  AttachOptions probe_all;
  probe_all.subchecks = SubcheckCounting::Attach;
  for (const auto& name : fentry_candidates(kallsyms, f, probe_all)) f.fentry_errors[name] = "";
  return f;
}

AttachOptions options(Mode mode = Mode::Auto, ProbeAttach attach = ProbeAttach::Auto) {
  AttachOptions o;
  o.mode = mode;
  o.probe_attach = attach;
  o.subchecks = SubcheckCounting::Attach;
  o.helper_symbols = {"simple_copy_to_iter"};
  return o;
}

const TargetPlan& target(const AttachPlan& plan, std::string_view symbol) {
  auto it = std::find_if(plan.targets.begin(), plan.targets.end(),
                         [&](const TargetPlan& t) { return t.target.symbol == symbol; });
  if (it == plan.targets.end()) throw std::runtime_error("no target " + std::string(symbol));
  return *it;
}

bool contains(const std::string& text, std::string_view part) {
  return text.find(part) != std::string::npos;
}

TEST(AttachPlan, Debian61EveryRealTargetByFentryInlinedOnesAbsent) {
  const auto k = index_of(kDebianKallsyms);
  const auto plan = compute_attach_plan(k, debian_facts(k), options());
  for (auto name : {"__check_object_size", "__check_heap_object", "find_vmap_area",
                    "__virt_addr_valid", "check_stack_object"}) {
    const TargetPlan& t = target(plan, name);
    EXPECT_EQ(t.symbol, name);
    EXPECT_EQ(t.flavour, Flavour::Fentry) << name << ": " << t.reason;
  }
  for (auto name : {"check_heap_object", "check_kernel_text_object"}) {
    const TargetPlan& t = target(plan, name);
    EXPECT_EQ(t.symbol, "");
    EXPECT_FALSE(t.attaches());
    EXPECT_TRUE(contains(t.reason, "inlined or not built in")) << t.reason;
  }
  EXPECT_TRUE(plan.probes);
  EXPECT_TRUE(plan.sampling);
  // __check_object_size and its .cold part; the sampler and the sub-check filter use them.
  EXPECT_EQ(plan.dispatcher_ranges.ranges.size(), 2u);
  EXPECT_EQ(plan.helper_ranges.ranges.size(), 1u);
  const Verdict v = judge(Mode::Auto, debian_facts(k).hardened, planned_outcome(plan));
  EXPECT_TRUE(v.runs);
  EXPECT_EQ(v.summary, "sampling on, probes on (fentry), sub-checks probed");
}

TEST(AttachPlan, ClassifiedSubchecksAreNotProbedAndTheCheckCountsThem) {
  const auto k = index_of(kDebianKallsyms);
  AttachOptions opts = options();
  opts.subchecks = SubcheckCounting::Classify;
  const auto plan = compute_attach_plan(k, debian_facts(k), opts);
  EXPECT_TRUE(plan.classifies());
  EXPECT_EQ(plan.check().flavour, Flavour::Fentry);
  for (auto name :
       {"__check_heap_object", "find_vmap_area", "__virt_addr_valid", "check_stack_object"}) {
    const TargetPlan& t = target(plan, name);
    EXPECT_EQ(t.symbol, name);
    EXPECT_FALSE(t.attaches()) << name;
    EXPECT_TRUE(contains(t.reason, "--probe.subchecks classify")) << t.reason;
  }
  // Not classified: still absent for its own reason.
  EXPECT_TRUE(contains(target(plan, "check_heap_object").reason, "inlined or not built in"));
  EXPECT_FALSE(compute_attach_plan(k, debian_facts(k), options()).classifies());
  EXPECT_EQ(plan.slab_marker.flag_bit, 9);
  EXPECT_TRUE(contains(plan.subchecks_reason, "PG_slab")) << plan.subchecks_reason;
  // No program runs after the check: it leaves no per-CPU state, and the sub-check map, which
  // only probed sub-check functions write, gets one entry.
  EXPECT_FALSE(plan.check_leaves_state);
  EXPECT_EQ(plan.maps.subcheck_keys, 1u);
  const auto attached = compute_attach_plan(k, debian_facts(k), options());
  EXPECT_TRUE(attached.check_leaves_state);
  EXPECT_EQ(attached.maps.subcheck_keys, attached.maps.max_keys);
}

TEST(AttachPlan, ClassifyWithoutSyscallProgramsProbesTheSubcheckFunctions) {
  // Before 5.14 the layout cannot be read once after load: the sub-check functions are attached.
  const auto k = index_of(kDebianKallsyms);
  AttachFacts facts = debian_facts(k);
  facts.kernel.syscall_programs = {false, "the kernel refused a syscall program (EINVAL)"};
  AttachOptions opts = options();
  opts.subchecks = SubcheckCounting::Classify;
  const auto plan = compute_attach_plan(k, facts, opts);
  EXPECT_FALSE(plan.classifies());
  EXPECT_EQ(target(plan, "check_stack_object").flavour, Flavour::Fentry);
  EXPECT_TRUE(contains(plan.subchecks_reason, "syscall program")) << plan.subchecks_reason;
}

TEST(AttachPlan, ClassifyWithoutASlabMarkerProbesTheSubcheckFunctions) {
  // A kernel whose BTF names neither PGTY_slab nor PG_slab (6.10-6.11 keep an inverted PG_slab
  // page type): the probe could not tell slab from page objects, so the sub-check functions are
  // attached.
  const auto k = index_of(kDebianKallsyms);
  AttachFacts facts = debian_facts(k);
  facts.slab_marker = {-1, -1, "neither PGTY_slab nor PG_slab in the kernel BTF"};
  AttachOptions opts = options();
  opts.subchecks = SubcheckCounting::Classify;
  const auto plan = compute_attach_plan(k, facts, opts);
  EXPECT_FALSE(plan.classifies());
  for (auto name :
       {"__check_heap_object", "find_vmap_area", "__virt_addr_valid", "check_stack_object"}) {
    EXPECT_EQ(target(plan, name).flavour, Flavour::Fentry) << name;
  }
  EXPECT_TRUE(contains(plan.subchecks_reason, "neither PGTY_slab nor PG_slab"))
      << plan.subchecks_reason;
}

TEST(AttachPlan, Debian73ClassifiesWithTheNewStructPageAndSaysHowItReadsTailPages) {
  const auto k = index_of(kDebianKallsyms);
  AttachOptions opts = options();
  opts.subchecks = SubcheckCounting::Classify;
  const auto plan = compute_attach_plan(k, debian73_facts(debian_facts(k)), opts);
  EXPECT_TRUE(plan.classifies());
  EXPECT_TRUE(plan.compound_info_mask);
  EXPECT_EQ(plan.slab_marker.page_type, 245);
  EXPECT_TRUE(contains(plan.subchecks_reason, "compound_info (a mask of the tail's address"))
      << plan.subchecks_reason;
  EXPECT_EQ(judge(Mode::Auto, debian_facts(k).hardened, planned_outcome(plan)).summary,
            "sampling on, probes on (fentry), sub-checks classified");
  // Without the HugeTLB vmemmap optimization compound_info is the head + 1, as compound_head is.
  AttachFacts pointer = debian73_facts(debian_facts(k));
  pointer.page_layout.hugetlb_vmemmap_optimize = false;
  EXPECT_FALSE(compute_attach_plan(k, pointer, opts).compound_info_mask);
  EXPECT_FALSE(compute_attach_plan(k, debian_facts(k), opts).compound_info_mask);
}

TEST(AttachPlan, AStructPageTheClassifierCannotReadProbesTheSubcheckFunctionsAndSaysWhy) {
  const auto k = index_of(kDebianKallsyms);
  AttachFacts facts = debian73_facts(debian_facts(k));
  facts.page_layout.head_field = "";  // a kernel that renamed it again
  AttachOptions opts = options();
  opts.subchecks = SubcheckCounting::Classify;
  const auto plan = compute_attach_plan(k, facts, opts);
  EXPECT_EQ(plan.subchecks, SubcheckMethod::Probed);
  for (auto name :
       {"__check_heap_object", "find_vmap_area", "__virt_addr_valid", "check_stack_object"}) {
    EXPECT_EQ(target(plan, name).flavour, Flavour::Fentry) << name;
  }
  EXPECT_EQ(plan.subchecks_reason,
            "sub-check functions probed instead of classified: the kernel's layout is not one "
            "the classifier reads: struct page has neither compound_head nor compound_info");
  facts.page_layout.unreadable = "no kernel BTF";
  EXPECT_TRUE(contains(compute_attach_plan(k, facts, opts).subchecks_reason,
                       "the kernel BTF cannot be read (no kernel BTF)"));
}

TEST(AttachPlan, ARefusedClassifierDegradesToProbedSubchecksThenToTheCheckAlone) {
  const auto k = index_of(kDebianKallsyms);
  AttachOptions opts = options();
  opts.subchecks = SubcheckCounting::Classify;
  const auto classified = compute_attach_plan(k, debian73_facts(debian_facts(k)), opts);
  ASSERT_TRUE(classified.classifies());

  const auto probed = degrade_subchecks(classified, "the kernel refused to load it: EINVAL");
  ASSERT_TRUE(probed);
  EXPECT_EQ(probed->subchecks, SubcheckMethod::Probed);
  EXPECT_FALSE(probed->compound_info_mask);
  EXPECT_FALSE(probed->slab_marker.known());
  for (auto name :
       {"__check_heap_object", "find_vmap_area", "__virt_addr_valid", "check_stack_object"}) {
    EXPECT_EQ(target(*probed, name).flavour, Flavour::Fentry) << name;
    EXPECT_EQ(target(*probed, name).reason, "fentry: the kernel took a test fentry program here");
  }
  EXPECT_EQ(probed->check().flavour, Flavour::Fentry);
  EXPECT_EQ(probed->subchecks_reason,
            "sub-check functions probed instead of classified: the kernel refused the "
            "classifying program: the kernel refused to load it: EINVAL");
  // Probed sub-checks read the state the check leaves, from a map of their own.
  EXPECT_TRUE(probed->check_leaves_state);
  EXPECT_EQ(probed->maps.subcheck_keys, probed->maps.max_keys);
  EXPECT_EQ(judge(Mode::Probe, debian_facts(k).hardened, planned_outcome(*probed)).summary,
            "probes on (fentry), sub-checks probed");

  const auto alone = degrade_subchecks(*probed, "E2BIG");
  ASSERT_TRUE(alone);
  EXPECT_EQ(alone->subchecks, SubcheckMethod::NotCounted);
  EXPECT_EQ(alone->check().flavour, Flavour::Fentry);
  for (auto name :
       {"__check_heap_object", "find_vmap_area", "__virt_addr_valid", "check_stack_object"}) {
    EXPECT_FALSE(target(*alone, name).attaches()) << name;
    EXPECT_TRUE(contains(target(*alone, name).reason, "sub-checks not counted")) << name;
  }
  EXPECT_FALSE(alone->check_leaves_state);
  EXPECT_EQ(alone->maps.subcheck_keys, 1u);
  EXPECT_EQ(judge(Mode::Probe, debian_facts(k).hardened, planned_outcome(*alone)).summary,
            "probes on (fentry), sub-checks not counted");
  // Below that only the check itself is left: its refusal is the session's.
  EXPECT_FALSE(degrade_subchecks(*alone, "EPERM"));
}

TEST(AttachPlan, DegradingKeepsTheCheckExitWithLatency) {
  const auto k = index_of(kDebianKallsyms);
  AttachOptions opts = options();
  opts.subchecks = SubcheckCounting::Classify;
  opts.latency = true;
  const auto classified = compute_attach_plan(k, debian_facts(k), opts);
  const auto alone = degrade_subchecks(*degrade_subchecks(classified, "a"), "b");
  ASSERT_TRUE(alone);
  EXPECT_EQ(target(*alone, "__check_object_size:return").flavour, Flavour::Fentry);
  EXPECT_TRUE(alone->check_leaves_state);  // the exit reads the entry time
}

TEST(AttachPlan, Debian612ForcedKprobeNeverProbesFentry) {
  const auto k = index_of(kDebianKallsyms);
  AttachFacts facts = debian_facts(k);
  const auto opts = options(Mode::Probe, ProbeAttach::Kprobe);
  EXPECT_TRUE(fentry_candidates(k, facts, opts).empty());
  const auto plan = compute_attach_plan(k, facts, opts);
  EXPECT_EQ(plan.check().flavour, Flavour::Kprobe);
  EXPECT_EQ(plan.check().reason, "kprobe (--probe.attach kprobe)");
  EXPECT_EQ(target(plan, "find_vmap_area").flavour, Flavour::Kprobe);
  EXPECT_FALSE(plan.sampling);
  EXPECT_EQ(plan.sampling_reason, "not tried: --mode probe");
  EXPECT_EQ(judge(Mode::Probe, facts.hardened, planned_outcome(plan)).summary,
            "probes on (kprobe), sub-checks probed");
}

// The rescue program goes only where a run of the check's program can be preempted, and only
// beside an fentry check: a kprobe's program runs with preemption off.
TEST(AttachPlan, TheRescueProgramOnlyWhereAFentryRunCanBePreempted) {
  const auto k = index_of(kDebianKallsyms);
  AttachFacts facts = debian_facts(k);
  facts.kernel.preemption = {"lazy", true, "the kernel config's default"};
  const auto lazy = compute_attach_plan(k, facts, options());
  EXPECT_EQ(lazy.check().flavour, Flavour::Fentry);
  EXPECT_TRUE(lazy.rescue);
  EXPECT_TRUE(contains(lazy.rescue_reason, "preemption lazy")) << lazy.rescue_reason;

  const auto kprobe = compute_attach_plan(k, facts, options(Mode::Probe, ProbeAttach::Kprobe));
  EXPECT_FALSE(kprobe.rescue);
  EXPECT_TRUE(contains(kprobe.rescue_reason, "preemption off")) << kprobe.rescue_reason;

  facts.kernel.preemption = {"voluntary", false, "the kernel config's default"};
  const auto voluntary = compute_attach_plan(k, facts, options());
  EXPECT_FALSE(voluntary.rescue);
  EXPECT_TRUE(contains(voluntary.rescue_reason, "never preempted")) << voluntary.rescue_reason;

  const auto sample = compute_attach_plan(k, facts, options(Mode::Sample));
  EXPECT_FALSE(sample.rescue);
}

// Slab checks are counted by cache only when asked (--probe.objects: it costs a lookup or two per
// slab check), and only where the sub-checks are classified (the cache comes from that walk).
TEST(AttachPlan, ObjectsCountedOnlyWhenAskedAndClassified) {
  const auto k = index_of(kDebianKallsyms);
  const AttachFacts facts = debian_facts(k);
  EXPECT_FALSE(compute_attach_plan(k, facts, options()).counts_objects());
  AttachOptions asked = options();
  asked.objects = true;
  asked.subchecks = SubcheckCounting::Classify;
  const auto classified = compute_attach_plan(k, facts, asked);
  EXPECT_EQ(classified.classifies(), classified.counts_objects());
  asked.subchecks = SubcheckCounting::Attach;
  EXPECT_FALSE(compute_attach_plan(k, facts, asked).counts_objects());
}

// Pids label samples only where `record` asks (a daemon's would be one key per process ever
// sampled) and only where the sampler runs.
TEST(AttachPlan, SamplesCarryPidsOnlyWhenRecording) {
  const auto k = index_of(kDebianKallsyms);
  const AttachFacts facts = debian_facts(k);
  EXPECT_FALSE(compute_attach_plan(k, facts, options(Mode::Sample)).sample_pids);
  AttachOptions recording = options(Mode::Sample);
  recording.label_pids = true;
  EXPECT_TRUE(compute_attach_plan(k, facts, recording).sample_pids);
  recording.mode = Mode::Probe;
  EXPECT_FALSE(compute_attach_plan(k, facts, recording).sample_pids) << "no sampler";
}

// --probe.rescue off keeps it off even where a run can be preempted, and says why.
TEST(AttachPlan, TheRescueProgramStaysOffWhenAskedTo) {
  const auto k = index_of(kDebianKallsyms);
  AttachFacts facts = debian_facts(k);
  facts.kernel.preemption = {"lazy", true, "the kernel config's default"};
  AttachOptions off = options();
  off.rescue = false;
  const auto plan = compute_attach_plan(k, facts, off);
  EXPECT_EQ(plan.check().flavour, Flavour::Fentry);
  EXPECT_FALSE(plan.rescue);
  EXPECT_EQ(plan.rescue_reason, "no rescue program: --probe.rescue off");
}

// The development machines: no kprobes, ftrace locked (fentry refused with EPERM).
TEST(AttachPlan, Host618WithoutKprobesSamplesAndSaysWhyNotProbes) {
  const auto k = index_of(kDebianKallsyms);
  AttachFacts facts = debian_facts(k);
  facts.kernel.kprobes = {false, "this kernel has no kprobes (CONFIG_KPROBES is not set)"};
  for (auto& [name, error] : facts.fentry_errors) {
    error = "the kernel refused to load an fentry program (EPERM: Operation not permitted)";
  }
  const auto plan = compute_attach_plan(k, facts, options());
  EXPECT_FALSE(plan.probes);
  EXPECT_EQ(plan.check().reason,
            "fentry: the kernel refused to load an fentry program (EPERM: Operation not "
            "permitted); kprobe: this kernel has no kprobes (CONFIG_KPROBES is not set)");
  EXPECT_EQ(target(plan, "__check_heap_object").reason,
            "not tried: __check_object_size is not attached (sub-checks are counted inside it)");
  EXPECT_TRUE(plan.sampling);
  EXPECT_TRUE(plan.interrupt_ranges.ranges.ranges.empty())
      << "this excerpt has no interrupt entry code; tests/unit/core/interrupt_entries_test.cpp "
         "has real kernels'";

  const Verdict auto_mode = judge(Mode::Auto, facts.hardened, planned_outcome(plan));
  EXPECT_TRUE(auto_mode.runs);
  EXPECT_EQ(auto_mode.summary, "sampling on, probes off");
  const Verdict probe_mode = judge(Mode::Probe, facts.hardened, planned_outcome(plan));
  EXPECT_FALSE(probe_mode.runs);
  EXPECT_TRUE(contains(probe_mode.summary,
                       "--mode probe: no probe could attach: __check_object_size: fentry: "))
      << probe_mode.summary;
}

TEST(AttachPlan, HardenedUsercopyOffAttachesNothingAndThatIsNoFailure) {
  const auto k = index_of(kDebianKallsyms);
  AttachFacts facts = debian_facts(k);
  facts.hardened = {false, "hardened_usercopy=off on the kernel command line"};
  EXPECT_TRUE(fentry_candidates(k, facts, options(Mode::Probe)).empty());
  const auto plan = compute_attach_plan(k, facts, options(Mode::Probe));
  EXPECT_FALSE(plan.probes);
  for (const TargetPlan& t : plan.targets) {
    EXPECT_FALSE(t.attaches());
    EXPECT_TRUE(contains(t.reason, "checks are off on this kernel")) << t.reason;
  }
  const Verdict v = judge(Mode::Probe, facts.hardened, planned_outcome(plan));
  EXPECT_TRUE(v.runs);
  EXPECT_EQ(v.summary, "probes off (the checks are off on this kernel)");
  const auto sampled = compute_attach_plan(k, facts, options(Mode::Auto));
  EXPECT_TRUE(sampled.sampling);  // auto still samples: the share is 0, and shown as such
}

TEST(AttachPlan, RealCheckHeapObjectIsProbedAndIsADispatcher) {
  const auto k = index_of(std::string(kDebianKallsyms) +
                          "ffffffff816c9500 T check_heap_object\n"
                          "ffffffff816c9600 T after_check_heap\n");
  const auto plan = compute_attach_plan(k, debian_facts(k), options());
  const TargetPlan& heap = target(plan, "check_heap_object");
  EXPECT_EQ(heap.symbol, "check_heap_object");
  EXPECT_EQ(heap.flavour, Flavour::Fentry);
  EXPECT_EQ(heap.target.program, TargetProgram::Heap);
  EXPECT_EQ(plan.dispatcher_ranges.ranges.size(), 3u);
}

TEST(AttachPlan, PartCloneIsAttachedWhenTheFunctionItselfIsGone) {
  const auto k = index_of(std::string(kDebianKallsyms) +
                          "ffffffff816c9500 t check_heap_object.part.0\n"
                          "ffffffff816c9600 t check_heap_object.cold\n"
                          "ffffffff816c9700 T after_check_heap\n");
  const auto plan = compute_attach_plan(k, debian_facts(k), options());
  const TargetPlan& heap = target(plan, "check_heap_object");
  EXPECT_EQ(heap.symbol, "check_heap_object.part.0");
  EXPECT_TRUE(contains(heap.symbol_reason, ".part clone")) << heap.symbol_reason;
  EXPECT_EQ(heap.flavour, Flavour::Fentry);
}

TEST(AttachPlan, ExactNameWinsOverItsClonesAndColdIsNeverAnEntry) {
  // The clone sits at a lower address than the function: a first-match scan picked it.
  const auto k = index_of(std::string(kDebianKallsyms) +
                          "ffffffff816c0000 t check_kernel_text_object.part.0\n"
                          "ffffffff816c0100 t between\n"
                          "ffffffff816c9500 T check_kernel_text_object\n"
                          "ffffffff816c9600 T after_text\n"
                          "ffffffff816c9700 t check_heap_object.cold\n"
                          "ffffffff816c9800 T after_cold\n");
  const auto plan = compute_attach_plan(k, debian_facts(k), options());
  EXPECT_EQ(target(plan, "check_kernel_text_object").symbol, "check_kernel_text_object");
  const TargetPlan& heap = target(plan, "check_heap_object");
  EXPECT_EQ(heap.symbol, "");
  EXPECT_TRUE(contains(heap.reason, ".cold part")) << heap.reason;
}

TEST(AttachPlan, FentryRefusedOnOneSymbolFallsBackToKprobeThere) {
  const auto k = index_of(kDebianKallsyms);
  AttachFacts facts = debian_facts(k);
  facts.fentry_errors["__virt_addr_valid"] = "not in kernel BTF";
  const auto plan = compute_attach_plan(k, facts, options());
  const TargetPlan& page = target(plan, "__virt_addr_valid");
  EXPECT_EQ(page.flavour, Flavour::Kprobe);
  EXPECT_EQ(page.reason, "kprobe, as fentry is refused: not in kernel BTF");
  EXPECT_EQ(plan.check().flavour, Flavour::Fentry);
  // Forced fentry: that target is left out, with both reasons.
  const auto forced = compute_attach_plan(k, facts, options(Mode::Auto, ProbeAttach::Fentry));
  EXPECT_EQ(target(forced, "__virt_addr_valid").reason,
            "fentry: not in kernel BTF; kprobe: not tried (--probe.attach fentry)");
}

TEST(AttachPlan, LatencyAddsTheCheckExitInTheSameFlavourAndItsMap) {
  const auto k = index_of(kDebianKallsyms);
  auto opts = options();
  EXPECT_FALSE(compute_attach_plan(k, debian_facts(k), opts).maps.latency);
  opts.latency = true;
  const auto plan = compute_attach_plan(k, debian_facts(k), opts);
  EXPECT_TRUE(plan.maps.latency);
  const TargetPlan& exit = target(plan, "__check_object_size:return");
  EXPECT_EQ(exit.target.program, TargetProgram::CheckReturn);
  EXPECT_EQ(exit.symbol, "__check_object_size");
  EXPECT_EQ(exit.flavour, Flavour::Fentry);
  // The exit reads the entry time the check left, also when the sub-checks are classified.
  opts.subchecks = SubcheckCounting::Classify;
  const auto classified = compute_attach_plan(k, debian_facts(k), opts);
  EXPECT_TRUE(classified.check_leaves_state);
  EXPECT_EQ(classified.maps.subcheck_keys, 1u);
  // Without probes there is nothing to time, and no map for it.
  const auto sampled = compute_attach_plan(k, debian_facts(k), [&] {
    auto o = opts;
    o.mode = Mode::Sample;
    return o;
  }());
  EXPECT_FALSE(sampled.maps.latency);
  EXPECT_EQ(sampled.targets.size(), probe_targets().size());
}

TEST(AttachPlan, SamplingCarriesTheInterruptEntryRanges) {
  const auto k = index_of(std::string(kDebianKallsyms) +
                          "ffffffff81c00290 T __irqentry_text_start\n"
                          "ffffffff81c01150 T __irqentry_text_end\n"
                          "ffffffff81c02000 T after_entry\n");
  const auto plan = compute_attach_plan(k, debian_facts(k), options(Mode::Sample));
  ASSERT_TRUE(plan.sampling);
  ASSERT_EQ(plan.interrupt_ranges.ranges.ranges.size(), 1u);
  EXPECT_EQ(plan.interrupt_ranges.ranges.ranges[0].start, 0xffffffff81c00290u);
  EXPECT_EQ(plan.interrupt_ranges.ranges.ranges[0].end, 0xffffffff81c01150u);
  EXPECT_EQ(compute_attach_plan(k, debian_facts(k), options(Mode::Probe))
                .interrupt_ranges.ranges.ranges.size(),
            0u)
      << "only the sampler uses them";
}

TEST(AttachPlan, SampleModeTriesNoProbe) {
  const auto k = index_of(kDebianKallsyms);
  const AttachFacts facts = debian_facts(k);
  EXPECT_TRUE(fentry_candidates(k, facts, options(Mode::Sample)).empty());
  const auto plan = compute_attach_plan(k, facts, options(Mode::Sample));
  EXPECT_FALSE(plan.probes);
  EXPECT_EQ(plan.check().reason, "not tried: --mode sample");
  EXPECT_EQ(plan.check().symbol, "__check_object_size");  // doctor still names it
  EXPECT_EQ(judge(Mode::Sample, facts.hardened, planned_outcome(plan)).summary, "sampling on");
}

TEST(AttachPlan, NothingAvailableIsAnErrorNamingBothReasons) {
  const auto k = index_of(kDebianKallsyms);
  AttachFacts facts = debian_facts(k);
  facts.kernel.btf = {false, "no /sys/kernel/btf/vmlinux"};
  facts.kernel.kprobes = {false, "no kprobes"};
  const auto plan = compute_attach_plan(k, facts, options());
  const Verdict v = judge(Mode::Auto, facts.hardened, planned_outcome(plan));
  EXPECT_FALSE(v.runs);
  EXPECT_EQ(v.summary,
            "--mode auto: neither probes (__check_object_size: fentry: no "
            "/sys/kernel/btf/vmlinux; kprobe: no kprobes) nor sampling (no "
            "/sys/kernel/btf/vmlinux) are available");
  const Verdict sample = judge(Mode::Sample, facts.hardened, planned_outcome(plan));
  EXPECT_FALSE(sample.runs);
}

TEST(AttachPlan, MapSizesComeFromTheOptionsAndAllocationFromTheKernel) {
  const auto k = index_of(kDebianKallsyms);
  AttachFacts facts = debian_facts(k);
  auto opts = options();
  opts.max_keys = 4096;
  opts.max_stacks = 1024;
  auto plan = compute_attach_plan(k, facts, opts);
  EXPECT_EQ(plan.maps.max_keys, 4096u);
  EXPECT_EQ(plan.maps.max_stacks, 1024u);
  EXPECT_TRUE(plan.maps.stacks_on_demand);
  facts.kernel.on_demand_maps = {false, "kernels before 6.1 need preallocated maps there"};
  plan = compute_attach_plan(k, facts, opts);
  EXPECT_FALSE(plan.maps.stacks_on_demand);
  EXPECT_TRUE(contains(plan.maps.stacks_reason, "preallocated")) << plan.maps.stacks_reason;
}

// Feature answers as a kernel gives them: every feature of the catalogue present but `missing`
// (names as BpfFeature::key() spells them).
BpfFeatureFacts features_without(std::initializer_list<std::string_view> missing) {
  BpfFeatureFacts facts;
  for (const BpfFeature& f : bpf_feature_catalog()) {
    facts.answers[f.key()] = {FeatureAnswer::State::Present, "probed"};
  }
  for (std::string_view key : missing) {
    auto it = facts.answers.find(std::string(key));
    if (it == facts.answers.end()) throw std::runtime_error("no feature " + std::string(key));
    it->second = {FeatureAnswer::State::Missing, "the verifier does not know it here"};
  }
  return facts;
}

// What Debian 11's 5.10.0-32 answered its feature probes (doctor in the VM tier's guest): no
// bpf_loop, no task BTF helpers, no fentry argument helpers, no syscall programs, no on-demand
// maps in perf_event programs, no bpf_rdonly_cast. Its kallsyms gives THREAD_SIZE 16 KiB.
AttachFacts debian510_facts(const KallsymsIndex& kallsyms) {
  AttachFacts f = debian_facts(kallsyms);
  f.kernel.bpf_features = features_without({
      "helper bpf_loop in perf_event",
      "helper bpf_get_current_task_btf in perf_event",
      "helper bpf_task_pt_regs in perf_event",
      "helper bpf_get_current_task_btf in kprobe",
      "helper bpf_task_pt_regs in kprobe",
      "helper bpf_get_current_task_btf in fentry",
      "helper bpf_task_pt_regs in fentry",
      "helper bpf_get_func_ip in fentry",
      "helper bpf_get_func_arg_cnt in fentry",
      "helper bpf_get_func_arg in fentry",
      "program type BPF_PROG_TYPE_SYSCALL",
      "map flag BPF_F_NO_PREALLOC (hash maps) in perf_event",
      "kfunc bpf_rdonly_cast",
  });
  f.kernel.syscall_programs = {false, "program type BPF_PROG_TYPE_SYSCALL (Linux 5.14): refused"};
  f.kernel.on_demand_maps = {false,
                             "map flag BPF_F_NO_PREALLOC (hash maps) in perf_event programs "
                             "(Linux 6.1): refused"};
  f.task_stack_size = 16384;
  return f;
}

TEST(AttachPlan, Debian510SamplesWithTheCompatBuildAndProbesByKprobeSayingWhyNotFentry) {
  const auto k = index_of(kDebianKallsyms);
  AttachOptions opts = options();
  opts.subchecks = SubcheckCounting::Classify;
  const auto plan = compute_attach_plan(k, debian510_facts(k), opts);
  EXPECT_TRUE(plan.sampling) << plan.sampling_reason;
  EXPECT_EQ(plan.sampler_build, SamplerBuild::Compat);
  EXPECT_TRUE(
      contains(plan.sampler_build_reason, "helper bpf_loop in perf_event programs (Linux 5.17)"))
      << plan.sampler_build_reason;
  EXPECT_EQ(plan.task_stack_size, 16384u);
  ASSERT_TRUE(plan.probes);
  for (auto name : {"__check_object_size", "__check_heap_object", "__virt_addr_valid"}) {
    const TargetPlan& t = target(plan, name);
    EXPECT_EQ(t.flavour, Flavour::Kprobe) << name;
    EXPECT_TRUE(contains(t.reason, "helper bpf_get_func_ip in fentry programs (Linux 5.15)"))
        << t.reason;
  }
  EXPECT_EQ(plan.probe_build, ProbeBuild::Compat);
  EXPECT_TRUE(
      contains(plan.probe_build_reason, "helper bpf_task_pt_regs in kprobe programs (Linux 5.15)"))
      << plan.probe_build_reason;
  // Classification reads the task through BTF and the layout with a syscall program: probed.
  EXPECT_EQ(plan.subchecks, SubcheckMethod::Probed);
  EXPECT_TRUE(contains(plan.subchecks_reason, "(Linux 5.1")) << plan.subchecks_reason;
  EXPECT_FALSE(plan.maps.stacks_on_demand);
  EXPECT_EQ(judge(Mode::Auto, debian_facts(k).hardened, planned_outcome(plan)).summary,
            "sampling on, probes on (kprobe), sub-checks probed");
}

TEST(AttachPlan, FeaturesThatComeLaterPickTheBetterBuilds) {
  const auto k = index_of(kDebianKallsyms);
  AttachFacts facts = debian_facts(k);
  // 6.1: everything but the kfunc (6.2).
  facts.kernel.bpf_features = features_without({"kfunc bpf_rdonly_cast"});
  auto plan = compute_attach_plan(k, facts, options());
  EXPECT_EQ(plan.sampler_build, SamplerBuild::Loop);
  EXPECT_EQ(plan.probe_build, ProbeBuild::HelperReads);
  EXPECT_EQ(plan.check().flavour, Flavour::Fentry);
  // 7.3: the kfunc too (x86_64 only).
  facts.kernel.bpf_features = features_without({});
  plan = compute_attach_plan(k, facts, options());
#if defined(__x86_64__)
  EXPECT_EQ(plan.probe_build, ProbeBuild::DirectReads);
#else
  EXPECT_EQ(plan.probe_build, ProbeBuild::HelperReads);
#endif
  // A kernel (a distribution's backport) with bpf_loop but without bpf_task_pt_regs.
  facts.kernel.bpf_features = features_without({"helper bpf_task_pt_regs in perf_event"});
  plan = compute_attach_plan(k, facts, options());
  EXPECT_EQ(plan.sampler_build, SamplerBuild::Compat);
  EXPECT_TRUE(contains(plan.sampler_build_reason, "bpf_task_pt_regs")) << plan.sampler_build_reason;
  // An unanswered probe (no privileges to ask) is not taken for a missing feature.
  facts.kernel.bpf_features.answers["helper bpf_task_pt_regs in perf_event"] = {
      FeatureAnswer::State::Unknown, "cannot tell"};
  EXPECT_EQ(compute_attach_plan(k, facts, options()).sampler_build, SamplerBuild::Loop);
}

TEST(AttachPlan, ASamplerHelperNoBuildHasTurnsSamplingOffNamingIt) {
  const auto k = index_of(kDebianKallsyms);
  AttachFacts facts = debian_facts(k);
  facts.kernel.bpf_features = features_without({"helper bpf_get_stack in perf_event"});
  const auto plan = compute_attach_plan(k, facts, options(Mode::Sample));
  EXPECT_FALSE(plan.sampling);
  EXPECT_EQ(plan.sampling_reason,
            "the sampler needs helper bpf_get_stack in perf_event programs (Linux 4.18), which "
            "this kernel lacks");
}

TEST(AttachPlan, AKprobeHelperNoBuildHasLeavesTheCheckUnattachedNamingIt) {
  const auto k = index_of(kDebianKallsyms);
  AttachFacts facts = debian_facts(k);
  facts.kernel.bpf_features =
      features_without({"helper bpf_get_stack in kprobe", "helper bpf_get_func_ip in fentry"});
  const auto plan = compute_attach_plan(k, facts, options(Mode::Probe));
  EXPECT_FALSE(plan.probes);
  EXPECT_EQ(plan.check().reason,
            "fentry: hucprof's fentry programs need helper bpf_get_func_ip in fentry programs "
            "(Linux 5.15), which this kernel lacks; kprobe: hucprof's kprobe programs need helper "
            "bpf_get_stack in kprobe programs (Linux 4.18), which this kernel lacks");
  // Nothing to probe fentry support on for a program that could not load anyway.
  EXPECT_TRUE(fentry_candidates(k, facts, options(Mode::Probe)).empty());
}

// The rescue is in every build of the probe object (probe.bpf.c reads its task as the build's
// check's program does): a kernel that runs fentry programs but lacks the task's BTF helpers (a
// distribution's backport) gets the compat build with the rescue; 5.10 probes by kprobe, so none.
TEST(AttachPlan, TheRescueGoesWithTheCompatBuildWhereItsCheckIsFentry) {
  const auto k = index_of(kDebianKallsyms);
  AttachFacts facts = debian_facts(k);
  facts.kernel.preemption = {"full", true, "preempt=full"};
  facts.kernel.bpf_features =
      features_without({"helper bpf_task_pt_regs in kprobe", "helper bpf_task_pt_regs in fentry"});
  const auto backport = compute_attach_plan(k, facts, options(Mode::Probe));
  EXPECT_EQ(backport.check().flavour, Flavour::Fentry);
  EXPECT_EQ(backport.probe_build, ProbeBuild::Compat) << backport.probe_build_reason;
  EXPECT_TRUE(backport.rescue);
  EXPECT_TRUE(contains(backport.rescue_reason, "probe_compat")) << backport.rescue_reason;

  AttachFacts old = debian510_facts(k);
  old.kernel.preemption = facts.kernel.preemption;
  const auto bullseye = compute_attach_plan(k, old, options(Mode::Probe));
  EXPECT_EQ(bullseye.probe_build, ProbeBuild::Compat);
  EXPECT_FALSE(bullseye.rescue);
  EXPECT_TRUE(contains(bullseye.rescue_reason, "preemption off")) << bullseye.rescue_reason;
}

TEST(AttachPlan, Compat510WithoutThreadSizeInKallsymsSaysSyscallsAreUnknown) {
  const auto k = index_of(kDebianKallsyms);
  AttachFacts facts = debian510_facts(k);
  facts.task_stack_size = 0;
  const auto plan = compute_attach_plan(k, facts, options(Mode::Sample));
  EXPECT_TRUE(plan.sampling);
  EXPECT_TRUE(contains(plan.sampler_build_reason, "syscall numbers unknown"))
      << plan.sampler_build_reason;
}

}  // namespace
}  // namespace hucprof
