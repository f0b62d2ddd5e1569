#pragma once
#include <map>
#include <string>
#include <string_view>
#include <vector>

namespace hucprof {

// The kernel BPF features hucprof's programs use, each probed alone at the kernel edge
// (daemon/kernel_edge/bpf_features.cpp) and decided upon here: which build of each BPF object loads
// on this kernel, and, where none does, which feature is missing and from which upstream release it
// exists. The releases are words for people (docs/kernels.md has the same table); no decision
// reads them.

// The program types hucprof loads; a helper or map flag is probed in one of them.
enum class BpfProgram { Kprobe, PerfEvent, Fentry, Syscall };
// "kprobe", "perf_event", "fentry", "syscall"
const char* bpf_program_name(BpfProgram program);

enum class BpfFeatureKind { ProgramType, Helper, MapFlag, Kfunc };

struct BpfFeature {
  BpfFeatureKind kind = BpfFeatureKind::Helper;
  std::string_view name;  // "bpf_loop", "BPF_PROG_TYPE_SYSCALL", "BPF_F_NO_PREALLOC", ...
  BpfProgram program = BpfProgram::Kprobe;  // where it is probed: its program type, or the one
                                            // calling the helper or using the map flag
  std::string_view since;                   // first upstream release with it, "5.17"
  std::string_view use;                     // what hucprof uses it for

  // One key per feature, "helper bpf_loop in perf_event": what the edge's answers are filed by.
  std::string key() const;
  // "helper bpf_loop in perf_event programs (Linux 5.17)"
  std::string words() const;
};

// Every feature the edge probes, in the order doctor lists them.
const std::vector<BpfFeature>& bpf_feature_catalog();

// The edge's answer for one feature: present, missing (the kernel said so), or unknown (the
// probe itself could not run, e.g. without privileges: then the load decides).
struct FeatureAnswer {
  enum class State { Present, Missing, Unknown };
  State state = State::Unknown;
  std::string detail;  // how the kernel answered, in words
};

struct BpfFeatureFacts {
  std::map<std::string, FeatureAnswer> answers;  // by BpfFeature::key()

  // Missing only when the kernel said so; never probed or unknown counts as present.
  bool missing(const BpfFeature& feature) const;
  // Present only when the kernel said so.
  bool present(const BpfFeature& feature) const;
  // Every feature of `needs` the kernel said it lacks, in order.
  std::vector<BpfFeature> missing_of(const std::vector<BpfFeature>& needs) const;
};

// "helper bpf_loop in perf_event programs (Linux 5.17) and helper ... (Linux 5.15)"
std::string feature_list_words(const std::vector<BpfFeature>& features);

// The builds of the sampler (bpf/sampler.bpf.c, bpf/CMakeLists.txt): with bpf_loop and the task's
// BTF helpers, or the compat build for older kernels (a bounded loop, the task read by helper
// calls). The same samples either way.
enum class SamplerBuild { Loop, Compat };
const char* sampler_build_name(SamplerBuild build);  // "sampler", "sampler_compat"
std::vector<BpfFeature> sampler_needs(SamplerBuild build);

// The builds of the probe object (bpf/probe.bpf.c): direct reads through the bpf_rdonly_cast
// kfunc, reads by bpf_probe_read_kernel() with the task's BTF helpers, or the compat build whose
// task is read by helper calls too. Their needs per flavour: every program of that flavour in the
// build (the check's, its return's, the sub-checks').
enum class ProbeBuild { DirectReads, HelperReads, Compat };
const char* probe_build_name(ProbeBuild build);  // "probe", "probe_helper_reads", "probe_compat"
std::vector<BpfFeature> probe_needs(ProbeBuild build, BpfProgram flavour);
// What classifying sub-checks inside the check's program (of `flavour`) needs: a syscall program
// to read the kernel's layout, and the task as a BTF pointer (direct loads of its fields).
std::vector<BpfFeature> classify_needs(BpfProgram flavour);
// Hash maps allocated on use in perf_event programs (else the stack maps are preallocated).
const BpfFeature& no_prealloc_feature();
// The kfunc of probe mode's direct reads.
const BpfFeature& rdonly_cast_feature();

}  // namespace hucprof
