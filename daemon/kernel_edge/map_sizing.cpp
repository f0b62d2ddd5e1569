#include "kernel_edge/map_sizing.h"

#include <bpf/libbpf.h>

#include "core/base/message_text.h"

namespace hucprof {

std::string apply_map_sizing(std::span<const MapSizing> sizings) {
  for (const MapSizing& s : sizings) {
    if (!s.map) return "a BPF map of the plan is missing from the object";
    const std::string name = bpf_map__name(s.map);
    auto failed = [&](const char* what, int err) {
      return "map " + name + ": cannot " + what + ": " + errno_text(err);
    };
    if (s.max_entries == 0) {
      if (int err = bpf_map__set_autocreate(s.map, false)) return failed("skip creating it", err);
      continue;
    }
    if (int err = bpf_map__set_max_entries(s.map, s.max_entries)) {
      return failed("set its size", err);
    }
    if (s.allocation == MapSizing::OnDemand) {
      if (int err = bpf_map__set_map_flags(s.map, bpf_map__map_flags(s.map) | BPF_F_NO_PREALLOC)) {
        return failed("set BPF_F_NO_PREALLOC", err);
      }
    }
  }
  return "";
}

}  // namespace hucprof
