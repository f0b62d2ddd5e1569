#include "core/probe_targets.h"

#include <array>

namespace hucprof {

std::span<const ProbeTarget> probe_targets() {
  static constexpr std::array kTargets{
      ProbeTarget{"__check_object_size", "huc_fentry_check_object_size",
                  "huc_kprobe_check_object_size", true},
      ProbeTarget{"__check_heap_object", "huc_fentry_slab", "huc_kprobe_slab", false},
      ProbeTarget{"find_vmap_area", "huc_fentry_vmalloc", "huc_kprobe_vmalloc", false},
      ProbeTarget{"check_heap_object", "huc_fentry_heap", "huc_kprobe_heap", false},
      ProbeTarget{"__virt_addr_valid", "huc_fentry_page", "huc_kprobe_page", false},
      ProbeTarget{"check_stack_object", "huc_fentry_stack", "huc_kprobe_stack", false},
      ProbeTarget{"check_kernel_text_object", "huc_fentry_text", "huc_kprobe_text", false},
  };
  return kTargets;
}

std::span<const std::string_view> dispatcher_symbols() {
  static constexpr std::array<std::string_view, 2> kDispatchers{"__check_object_size",
                                                                "check_heap_object"};
  return kDispatchers;
}

}  // namespace hucprof
