#pragma once
#include <cstdint>
#include <span>
#include <string_view>

namespace hucprof {

// The kernel functions probe mode attaches to, and the BPF programs that serve each. Data, so
// a kernel that renames a sub-check is a one-line change.
struct ProbeTarget {
  std::string_view symbol;       // normalized kernel symbol
  std::string_view fentry_prog;  // BPF program names in probe.bpf.c
  std::string_view kprobe_prog;
  bool is_check;                 // __check_object_size itself; the others are sub-checks
};

std::span<const ProbeTarget> probe_targets();

// Functions whose callers are the dispatchers of sub-checks (and what the sampler looks for).
std::span<const std::string_view> dispatcher_symbols();

}  // namespace hucprof
