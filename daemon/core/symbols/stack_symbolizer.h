#pragma once
#include <cstdint>
#include <optional>
#include <set>
#include <string_view>
#include <vector>

#include "core/symbols/folding_rules.h"
#include "core/symbols/stack_interner.h"
#include "core/symbols/symbolizer.h"

namespace hucprof {

// A kernel stack's frames resolved once (nullopt: outside every symbol), for whatever needs the
// names: the call site's fold and the profile stack. Every entry is a return address, except
// the leaf of a cpu-clock sample, which is the interrupted instruction (leaf_is_sampled).
using ResolvedStack = std::vector<std::optional<ResolvedFrame>>;
ResolvedStack resolve_stack(const std::vector<uint64_t>& addrs, Symbolizer& symbols,
                            bool leaf_is_sampled = false);

// Kernel stacks (addresses, leaf first) → interned profile stacks: each frame named, with its
// offsets, never its address. Pure: the addresses come from a drain, the names from a
// Symbolizer.
class StackSymbolizer {
 public:
  explicit StackSymbolizer(FoldingRules rules,
                           size_t max_stacks = StackInterner::kDefaultMaxStacks);

  // A cpu-clock sample's stack as it is: the leaf is the interrupted instruction, which may lie
  // below the check (a spinlock under find_vmap_area is the check's cost too).
  StackPtr sampled(const std::vector<uint64_t>& addrs, Symbolizer& symbols) {
    return sampled(resolve_stack(addrs, symbols, true));
  }
  StackPtr sampled(ResolvedStack frames);
  // A stack taken at the entry of __check_object_size (probe mode): whatever ran below the check
  // to take it (BPF trampoline and program, kprobe handler) is dropped, so the check is the
  // leaf. Also right for a short stack or a lone caller address: a stack that does not show the
  // check gets it as its leaf.
  StackPtr probed(const std::vector<uint64_t>& addrs, Symbolizer& symbols) {
    return probed(resolve_stack(addrs, symbols));
  }
  StackPtr probed(ResolvedStack resolved);
  // `stack` with a sub-check's function on top ("find_vmap_area" for HUC_CHECK_VMALLOC): where
  // probe mode counted that sub-check run.
  StackPtr with_subcheck(const StackPtr& stack, uint32_t kind);

  bool is_overflow(const StackPtr& stack) const { return interner_.is_overflow(stack); }
  LabelsPtr labels(std::string_view callsite, std::string_view syscall, std::string_view check,
                   std::string_view direction, std::string_view copy = {}) {
    return interner_.labels(callsite, syscall, check, direction, copy);
  }
  // `labels` with another copy label, or other workload or task labels (StackInterner).
  LabelsPtr with_copy(const LabelsPtr& labels, std::string_view copy) {
    return interner_.with_copy(labels, copy);
  }
  LabelsPtr with_task(const LabelsPtr& labels, std::string_view comm, int64_t pid) {
    return interner_.with_task(labels, comm, pid);
  }
  LabelsPtr with_workload(const LabelsPtr& labels, std::string_view workload,
                          std::string_view kind) {
    return interner_.with_workload(labels, workload, kind);
  }
  LabelsPtr with_workload_and_task(const LabelsPtr& labels, std::string_view workload,
                                   std::string_view kind, std::string_view comm, int64_t pid) {
    return interner_.with_workload_and_task(labels, workload, kind, comm, pid);
  }
  // Label sets nobody holds any more are forgotten (StackInterner::release_unused).
  void release_unused() { interner_.release_unused(); }
  std::set<std::string_view, std::less<>> comms() const { return interner_.comms(); }
  const FoldingRules& rules() const { return rules_; }

 private:
  FramePtr frame(std::optional<ResolvedFrame> resolved);
  FramePtr named(std::string_view function);  // a frame known by name only (offsets 0)
  bool is_check(const ProfileFrame& frame) const;

  FoldingRules rules_;
  StackInterner interner_;
};

// The kernel function probe mode attaches to for a sub-check kind (enum huc_check_kind).
std::string_view subcheck_function(uint32_t kind);

}  // namespace hucprof
