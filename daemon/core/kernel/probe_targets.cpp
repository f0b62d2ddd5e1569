#include "core/kernel/probe_targets.h"

#include <array>

namespace hucprof {

std::span<const ProbeTarget> probe_targets() {
  static constexpr std::array kTargets{
      ProbeTarget{"__check_object_size", TargetProgram::Check},
      ProbeTarget{"__check_heap_object", TargetProgram::Slab},
      ProbeTarget{"find_vmap_area", TargetProgram::Vmalloc},
      ProbeTarget{"check_heap_object", TargetProgram::Heap},
      ProbeTarget{"__virt_addr_valid", TargetProgram::Page},
      ProbeTarget{"check_stack_object", TargetProgram::Stack},
      ProbeTarget{"check_kernel_text_object", TargetProgram::Text},
  };
  return kTargets;
}

std::span<const std::string_view> dispatcher_symbols() {
  static constexpr std::array<std::string_view, 2> kDispatchers{"__check_object_size",
                                                                "check_heap_object"};
  return kDispatchers;
}

}  // namespace hucprof
