#pragma once
#include <string>

namespace hucprof {

// What became of one planned probe target, or of the sampler, when the attach plan was carried
// out: attached as what, or why not. Logged once when run starts; the snapshot's probes carry
// them to hucprof_probe_attached and hucprof_probe_unavailable_info.
struct TargetStatus {
  std::string target;       // as the user knows it, e.g. "__check_object_size", "cpu-clock"
  std::string attach_name;  // the exact symbol or event, e.g. "check_heap_object.part.0"
  std::string mode;         // "fentry" | "kprobe" | "perf_event" | "" when unavailable
  bool attached = false;
  std::string reason;  // why not attached, or why this mode, in words
};

}  // namespace hucprof
