#include "core/kernel/bpf_features.h"

#include <algorithm>
#include <string>

namespace hucprof {
namespace {

using K = BpfFeatureKind;
using P = BpfProgram;

// The catalogue: each feature once. The releases are upstream Linux's (docs/kernels.md).
const BpfFeature kKprobeType{K::ProgramType, "BPF_PROG_TYPE_KPROBE", P::Kprobe, "4.1",
                             "probe mode's kprobe flavour"};
const BpfFeature kPerfEventType{K::ProgramType, "BPF_PROG_TYPE_PERF_EVENT", P::PerfEvent, "4.9",
                                "sampling"};
const BpfFeature kFentryType{K::ProgramType, "BPF_PROG_TYPE_TRACING (fentry)", P::Fentry, "5.5",
                             "probe mode's fentry flavour"};
const BpfFeature kSyscallType{K::ProgramType, "BPF_PROG_TYPE_SYSCALL", P::Syscall, "5.14",
                              "reading the kernel's layout once, to classify sub-checks"};

BpfFeature helper(std::string_view name, BpfProgram program, std::string_view since,
                  std::string_view use) {
  return {K::Helper, name, program, since, use};
}

// A helper that came before its program type exists from the program type's release on.
std::string_view since_in(BpfProgram p, std::string_view helper_since) {
  const std::string_view type_since = p == P::Kprobe      ? "4.1"
                                      : p == P::PerfEvent ? "4.9"
                                      : p == P::Fentry    ? "5.5"
                                                          : "5.14";
  auto number = [](std::string_view v) {
    const size_t dot = v.find('.');
    return std::stoi(std::string(v.substr(0, dot))) * 1000 +
           std::stoi(std::string(v.substr(dot + 1)));
  };
  return number(helper_since) < number(type_since) ? type_since : helper_since;
}

// The helpers every build of a program calls, by program type.
std::vector<BpfFeature> common_helpers(BpfProgram p) {
  std::vector<BpfFeature> out = {
      helper("bpf_map_lookup_elem", p, since_in(p, "3.19"), "every counter"),
      helper("bpf_map_update_elem", p, since_in(p, "3.19"), "every counter"),
      helper("bpf_get_current_pid_tgid", p, since_in(p, "4.2"),
             "the idle task, the task a check ran in"),
      helper("bpf_get_current_cgroup_id", p, since_in(p, "4.18"), "which workload pays"),
      helper("bpf_get_stack", p, since_in(p, "4.18"), "stacks"),
      helper("bpf_get_smp_processor_id", p, since_in(p, "4.1"), "record -C"),
  };
  if (p != P::PerfEvent) {
    out.push_back(helper("bpf_probe_read_kernel", p, since_in(p, "5.5"), "reading kernel memory"));
    out.push_back(helper("bpf_ktime_get_ns", p, since_in(p, "4.1"), "--latency"));
  }
  return out;
}

// How the task is read: its BTF pointer and user registers, or helper calls.
std::vector<BpfFeature> task_btf_helpers(BpfProgram p) {
  return {helper("bpf_get_current_task_btf", p, "5.11", "the current task as a BTF pointer"),
          helper("bpf_task_pt_regs", p, "5.15", "the syscall number, from the task's registers")};
}

std::vector<BpfFeature> task_by_helper(BpfProgram p) {
  std::vector<BpfFeature> out = {helper("bpf_get_current_task", p, since_in(p, "4.8"),
                                        "the current task, read by helper calls")};
  if (p == P::PerfEvent) {
    out.push_back(helper("bpf_probe_read_kernel", p, "5.5", "the task's fields and registers"));
  }
  return out;
}

std::vector<BpfFeature> fentry_helpers() {
  return {helper("bpf_get_func_ip", P::Fentry, "5.15", "the traced function's address"),
          helper("bpf_get_func_arg_cnt", P::Fentry, "5.17", "the trampoline frame's size"),
          helper("bpf_get_func_arg", P::Fentry, "5.17", "the checked object's address")};
}

const BpfFeature kLoop =
    helper("bpf_loop", P::PerfEvent, "5.17", "the sampler's stack scan (else a bounded loop)");
const BpfFeature kNoPrealloc{K::MapFlag, "BPF_F_NO_PREALLOC (hash maps)", P::PerfEvent, "6.1",
                             "stack maps allocated on use (else preallocated)"};
const BpfFeature kRdonlyCast{K::Kfunc, "bpf_rdonly_cast", P::Kprobe, "6.2",
                             "probe mode's direct reads (else bpf_probe_read_kernel)"};

void append(std::vector<BpfFeature>& to, const std::vector<BpfFeature>& more) {
  for (const BpfFeature& f : more) {
    if (std::none_of(to.begin(), to.end(), [&](const BpfFeature& g) { return g.key() == f.key(); }))
      to.push_back(f);
  }
}

}  // namespace

const char* bpf_program_name(BpfProgram program) {
  switch (program) {
    case BpfProgram::Kprobe:
      return "kprobe";
    case BpfProgram::PerfEvent:
      return "perf_event";
    case BpfProgram::Fentry:
      return "fentry";
    case BpfProgram::Syscall:
      return "syscall";
  }
  return "?";
}

std::string BpfFeature::key() const {
  switch (kind) {
    case K::ProgramType:
      return "program type " + std::string(name);
    case K::Helper:
      return "helper " + std::string(name) + " in " + bpf_program_name(program);
    case K::MapFlag:
      return "map flag " + std::string(name) + " in " + bpf_program_name(program);
    case K::Kfunc:
      return "kfunc " + std::string(name);
  }
  return std::string(name);
}

std::string BpfFeature::words() const {
  std::string w;
  switch (kind) {
    case K::ProgramType:
      w = "program type " + std::string(name);
      break;
    case K::Helper:
      w = "helper " + std::string(name) + " in " + bpf_program_name(program) + " programs";
      break;
    case K::MapFlag:
      w = "map flag " + std::string(name) + " in " + bpf_program_name(program) + " programs";
      break;
    case K::Kfunc:
      w = "kfunc " + std::string(name);
      break;
  }
  return w + " (Linux " + std::string(since) + ")";
}

const std::vector<BpfFeature>& bpf_feature_catalog() {
  static const std::vector<BpfFeature> catalog = [] {
    std::vector<BpfFeature> all = {kPerfEventType, kKprobeType, kFentryType, kSyscallType};
    append(all, sampler_needs(SamplerBuild::Loop));
    append(all, sampler_needs(SamplerBuild::Compat));
    for (BpfProgram flavour : {BpfProgram::Kprobe, BpfProgram::Fentry}) {
      for (ProbeBuild build :
           {ProbeBuild::DirectReads, ProbeBuild::HelperReads, ProbeBuild::Compat})
        append(all, probe_needs(build, flavour));
    }
    append(all, classify_needs(BpfProgram::Kprobe));
    append(all, classify_needs(BpfProgram::Fentry));
    append(all, {kNoPrealloc});
    return all;
  }();
  return catalog;
}

bool BpfFeatureFacts::missing(const BpfFeature& feature) const {
  auto it = answers.find(feature.key());
  return it != answers.end() && it->second.state == FeatureAnswer::State::Missing;
}

bool BpfFeatureFacts::present(const BpfFeature& feature) const {
  auto it = answers.find(feature.key());
  return it != answers.end() && it->second.state == FeatureAnswer::State::Present;
}

std::vector<BpfFeature> BpfFeatureFacts::missing_of(const std::vector<BpfFeature>& needs) const {
  std::vector<BpfFeature> out;
  for (const BpfFeature& f : needs) {
    if (missing(f)) out.push_back(f);
  }
  return out;
}

std::string feature_list_words(const std::vector<BpfFeature>& features) {
  std::string out;
  for (size_t i = 0; i < features.size(); ++i) {
    if (i > 0) out += i + 1 == features.size() ? " and " : ", ";
    out += features[i].words();
  }
  return out;
}

const char* sampler_build_name(SamplerBuild build) {
  return build == SamplerBuild::Loop ? "sampler" : "sampler_compat";
}

std::vector<BpfFeature> sampler_needs(SamplerBuild build) {
  std::vector<BpfFeature> needs = {kPerfEventType};
  append(needs, common_helpers(P::PerfEvent));
  needs.push_back(helper("bpf_get_current_comm", P::PerfEvent, since_in(P::PerfEvent, "4.2"),
                         "the samples' comm label"));
  if (build == SamplerBuild::Loop) {
    needs.push_back(kLoop);
    append(needs, task_btf_helpers(P::PerfEvent));
  } else {
    append(needs, task_by_helper(P::PerfEvent));
  }
  return needs;
}

const char* probe_build_name(ProbeBuild build) {
  switch (build) {
    case ProbeBuild::DirectReads:
      return "probe";
    case ProbeBuild::HelperReads:
      return "probe_helper_reads";
    case ProbeBuild::Compat:
      return "probe_compat";
  }
  return "?";
}

std::vector<BpfFeature> probe_needs(ProbeBuild build, BpfProgram flavour) {
  std::vector<BpfFeature> needs = {flavour == BpfProgram::Fentry ? kFentryType : kKprobeType};
  append(needs, common_helpers(flavour));
  needs.push_back(helper("bpf_probe_read_kernel_str", flavour, since_in(flavour, "5.5"),
                         "a slab cache's name, once per cache"));
  if (flavour == BpfProgram::Fentry) append(needs, fentry_helpers());
  if (build == ProbeBuild::Compat) {
    append(needs, task_by_helper(flavour));
  } else {
    append(needs, task_btf_helpers(flavour));
  }
  if (build == ProbeBuild::DirectReads) needs.push_back(kRdonlyCast);
  return needs;
}

std::vector<BpfFeature> classify_needs(BpfProgram flavour) {
  std::vector<BpfFeature> needs = {kSyscallType};
  append(needs, task_btf_helpers(flavour));
  // huc_read_layout, the syscall program: the KASLR bases and the task's stack size.
  append(needs, {helper("bpf_probe_read_kernel", P::Syscall, "5.14", "the kernel's layout"),
                 helper("bpf_get_current_task_btf", P::Syscall, "5.14", "the task's stack size")});
  return needs;
}

const BpfFeature& no_prealloc_feature() { return kNoPrealloc; }

const BpfFeature& rdonly_cast_feature() { return kRdonlyCast; }

}  // namespace hucprof
