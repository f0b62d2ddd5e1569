#pragma once
#include <cstdint>
#include <span>
#include <string_view>

namespace hucprof {

// Which pair of BPF programs (fentry and kprobe flavour) in probe.bpf.c serves a target; the
// kernel edge maps each to the skeleton's typed program handles.
enum class TargetProgram { Check, CheckReturn, Slab, Vmalloc, Heap, Page, Stack, Text };

// The kernel functions probe mode attaches to. Data, so a kernel that renames a sub-check is a
// one-line change.
struct ProbeTarget {
  std::string_view symbol;  // normalized kernel symbol ("__check_object_size:return": its exit)
  TargetProgram program;

  bool is_check() const { return program == TargetProgram::Check; }
};

// Every target, __check_object_size first.
std::span<const ProbeTarget> probe_targets();

// The exit of __check_object_size, timed with --latency (fexit or kretprobe).
inline constexpr ProbeTarget kCheckReturnTarget{"__check_object_size:return",
                                                TargetProgram::CheckReturn};

// Functions whose callers are the dispatchers of sub-checks (and what the sampler looks for).
std::span<const std::string_view> dispatcher_symbols();

}  // namespace hucprof
