#pragma once
#include <cstddef>
#include <memory>
#include <set>
#include <string>

#include "core/base/result.h"
#include "core/kernel/attach_plan.h"
#include "hucprof_abi.h"
// The skeleton after the ABI header: its rodata struct uses struct huc_range.
#include "probe.skel.h"

namespace hucprof {

// probe.bpf.c's object, opened and configured for (part of) an attach plan, in one of its
// builds: which program a target runs, which targets load, rodata and map sizes. ProbeSession
// loads and attaches what this configures.
// (The skeleton's functions are static: a deleter of its own keeps this type usable across files.)
struct ProbeObjectDeleter {
  void operator()(probe_bpf* skel) const;
};
using ProbeSkeleton = std::unique_ptr<probe_bpf, ProbeObjectDeleter>;

// Opens the object and configures it for the given targets only (by index into plan.targets):
// their programs' autoload and attach targets, rodata, map sizes. Every libbpf failure comes
// back as words naming what failed.
Result<ProbeSkeleton> open_probe_object(const AttachPlan& plan, const std::set<size_t>& enabled,
                                        ProbeBuild build);

// The program of `target`'s role and flavour in `build`.
bpf_program* program_for(const probe_bpf& skel, const TargetPlan& target, ProbeBuild build);
// The rescue program of the check's flavour in `build` (program_for's): every build has one.
bpf_program* rescue_program(const probe_bpf& skel, ProbeBuild build);
// The index of __check_object_size's target in the plan.
size_t check_index(const AttachPlan& plan);

// Fills the layout sub-check classification reads (usercopy_classify.bpf.h) before any check
// runs: one run of the huc_read_layout syscall program. "" when it ran, else why not.
std::string read_kernel_layout(const probe_bpf& skel);

// Why the kernel refused to load a program, for a status or a log line.
std::string load_error(int err);

}  // namespace hucprof
