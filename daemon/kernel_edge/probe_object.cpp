#include "kernel_edge/probe_object.h"

#include <cerrno>
#include <cstdlib>
#include <cstring>

#include <bpf/bpf.h>
#include <spdlog/spdlog.h>

#include "core/base/message_text.h"
#include "kernel_edge/abi_checks.h"
#include "kernel_edge/libbpf_ptr.h"
#include "kernel_edge/map_sizing.h"
#include "kernel_edge/rodata_ranges.h"
#include "probe_compat.skel.h"
#include "probe_helper_reads.skel.h"

namespace hucprof {

namespace {

struct Programs {
  bpf_program* fentry = nullptr;
  bpf_program* kprobe = nullptr;
};

// The skeleton's typed handles: a program renamed in probe.bpf.c fails to compile here instead
// of failing a lookup at run time. direct: the check's flavour that reads kernel memory by
// direct loads (arch_reads.bpf.h, huc_kernel_word), in the DirectReads build.
Programs programs_of(const probe_bpf& skel, TargetProgram program, bool direct) {
  const auto& p = skel.progs;
  switch (program) {
    case TargetProgram::Check:
      if (direct) return {p.huc_fentry_check_direct, p.huc_kprobe_check_direct};
      return {p.huc_fentry_check_object_size, p.huc_kprobe_check_object_size};
    case TargetProgram::CheckReturn:
      return {p.huc_fexit_check_object_size, p.huc_kretprobe_check_object_size};
    case TargetProgram::Slab:
      return {p.huc_fentry_slab, p.huc_kprobe_slab};
    case TargetProgram::Vmalloc:
      return {p.huc_fentry_vmalloc, p.huc_kprobe_vmalloc};
    case TargetProgram::Heap:
      return {p.huc_fentry_heap, p.huc_kprobe_heap};
    case TargetProgram::Page:
      return {p.huc_fentry_page, p.huc_kprobe_page};
    case TargetProgram::Stack:
      return {p.huc_fentry_stack, p.huc_kprobe_stack};
    case TargetProgram::Text:
      return {p.huc_fentry_text, p.huc_kprobe_text};
  }
  return {};
}

}  // namespace

void ProbeObjectDeleter::operator()(probe_bpf* skel) const { probe_bpf__destroy(skel); }

bpf_program* program_for(const probe_bpf& skel, const TargetPlan& target, ProbeBuild build) {
  const Programs programs =
      programs_of(skel, target.target.program, build == ProbeBuild::DirectReads);
  return target.flavour == Flavour::Fentry ? programs.fentry : programs.kprobe;
}

bpf_program* rescue_program(const probe_bpf& skel, ProbeBuild build) {
  return build == ProbeBuild::DirectReads ? skel.progs.huc_fentry_rescue_direct
                                          : skel.progs.huc_fentry_rescue;
}

std::string read_kernel_layout(const probe_bpf& skel) {
  LIBBPF_OPTS(bpf_test_run_opts, run);
  if (bpf_prog_test_run_opts(bpf_program__fd(skel.progs.huc_read_layout), &run) != 0) {
    return "cannot run huc_read_layout, which reads the kernel's layout for it (" +
           errno_text(errno) + ")";
  }
  return "";
}

Result<ProbeSkeleton> open_probe_object(const AttachPlan& plan, const std::set<size_t>& enabled,
                                        ProbeBuild build) {
  // Without direct reads, a build without the kfunc extern: libbpf would otherwise look for it
  // in the modules' BTF, which needs CAP_SYS_ADMIN (arch_reads.bpf.h).
  ProbeSkeleton opened(
      build == ProbeBuild::DirectReads ? probe_bpf__open()
      : build == ProbeBuild::HelperReads
          ? open_skeleton_over<probe_bpf, probe_bpf__create_skeleton, probe_bpf__destroy>(
                probe_helper_reads_bpf__elf_bytes)
          : open_skeleton_over<probe_bpf, probe_bpf__create_skeleton, probe_bpf__destroy>(
                probe_compat_bpf__elf_bytes));
  if (!opened) {
    return Error{std::string("cannot open the probe BPF object: ") + errno_text(errno),
                 kExitCannotRun};
  }
  probe_bpf& skel = *opened;
  if (auto mismatch = check_probe_abi(skel.obj); !mismatch.empty()) {
    return Error{"BPF/daemon ABI mismatch: " + mismatch, kExitCannotRun};
  }
  bpf_program* prog;
  bpf_object__for_each_program(prog, skel.obj) bpf_program__set_autoload(prog, false);
  if (plan.classifies()) bpf_program__set_autoload(skel.progs.huc_read_layout, true);
  for (size_t i : enabled) {
    const TargetPlan& target = plan.targets[i];
    const std::string name(target.target.symbol);
    bpf_program* program = program_for(skel, target, build);
    if (!program) {
      return Error{name + ": the probe BPF object has no " + flavour_name(target.flavour) +
                       " program for it",
                   kExitCannotRun};
    }
    if (int err = bpf_program__set_autoload(program, true); err) {
      return Error{name + ": cannot enable its program: " + errno_text(err), kExitCannotRun};
    }
    if (target.flavour == Flavour::Fentry) {
      if (int err = bpf_program__set_attach_target(program, 0, target.symbol.c_str()); err) {
        return Error{name + ": cannot aim fentry at " + target.symbol + ": " + errno_text(err),
                     kExitCannotRun};
      }
    }
  }
  const size_t check = check_index(plan);
  if (plan.rescue && enabled.contains(check)) {
    bpf_program* rescue = rescue_program(skel, build);
    bpf_program__set_autoload(rescue, true);
    if (int err = bpf_program__set_attach_target(rescue, 0, plan.targets[check].symbol.c_str());
        err) {
      return Error{
          "cannot aim the rescue program at " + plan.targets[check].symbol + ": " + errno_text(err),
          kExitCannotRun};
    }
  }
  auto* rodata = skel.rodata;
  rodata->rescue_enabled = plan.rescue && enabled.contains(check);
  set_rodata_ranges(rodata->helper_ranges, &rodata->nr_helper_ranges, plan.helper_ranges);
  set_rodata_ranges(rodata->dispatcher_ranges, &rodata->nr_dispatcher_ranges,
                    plan.dispatcher_ranges);
  rodata->latency_enabled = plan.maps.latency;
  rodata->classify_subchecks = plan.classifies();
  rodata->count_objects = plan.counts_objects();
  rodata->compound_info_mask = plan.compound_info_mask;
  rodata->check_leaves_state = plan.check_leaves_state;
  rodata->key_by_cgroup = plan.probe_workloads;
  set_rodata_follow(*rodata, plan.follow);
  rodata->slab_page_type = static_cast<__s32>(plan.slab_marker.page_type);
  rodata->slab_flag_bit = static_cast<__s32>(plan.slab_marker.flag_bit);
  rodata->task_stack_size = plan.task_stack_size;
  // Benchmarks only (bench/vm/probe_overhead.py --stages): where the check's program stops.
  if (const char* stop = std::getenv("HUCPROF_BENCH_STOP_AFTER")) {
    rodata->bench_stop_after = static_cast<uint32_t>(std::strtoul(stop, nullptr, 10));
    spdlog::warn(
        "HUCPROF_BENCH_STOP_AFTER={}: the check's program stops early, counts are "
        "not kept (a benchmark's setting)",
        rodata->bench_stop_after);
  }

  const MapSizing sizing[] = {
      {skel.maps.sites, plan.maps.max_keys, MapSizing::Preallocated},
      {skel.maps.subchecks, plan.maps.subcheck_keys, MapSizing::Preallocated},
      {skel.maps.objects, plan.counts_objects() ? plan.maps.max_keys : 1, MapSizing::Preallocated},
      {skel.maps.latency, plan.maps.latency ? plan.maps.max_keys : 0, MapSizing::Preallocated},
      // Part of a key: never allowed to fail for want of memory at run time.
      {skel.maps.short_stacks, plan.maps.max_stacks, MapSizing::Preallocated},
      {skel.maps.full_stacks, plan.maps.max_stacks,
       plan.maps.stacks_on_demand ? MapSizing::OnDemand : MapSizing::Preallocated},
  };
  if (std::string refused = apply_map_sizing(sizing); !refused.empty()) {
    return Error{std::move(refused), kExitCannotRun};
  }
  return opened;
}

std::string load_error(int err) {
  return std::string("the kernel refused to load it: ") + errno_text(err) +
         " (run with --log.level=debug for the verifier log)";
}

size_t check_index(const AttachPlan& plan) {
  for (size_t i = 0; i < plan.targets.size(); ++i) {
    if (plan.targets[i].target.is_check()) return i;
  }
  return 0;
}

}  // namespace hucprof
