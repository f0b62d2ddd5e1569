#pragma once
#include <optional>
#include <span>
#include <string>

#include "core/symbols/folding_rules.h"

namespace hucprof {

struct FoldedCallsite {
  std::string callsite;  // first frame above the check + copy-helper frames, normalized
  std::string syscall;   // "recvfrom", or "none" when no syscall frame is on the stack
  std::string step;  // step of the innermost check frame ("entry", "slab_object", ...), "" if none
  bool truncated =
      false;  // the stack ended inside the usercopy machinery: callsite is "[truncated]"

  auto operator<=>(const FoldedCallsite&) const = default;
};

// Turns a symbolized kernel stack (leaf first, exact or normalized names) into the labels of
// the metric contract. Pure: no kernel, no I/O.
//
// Rules: the innermost check frame gives `step`; everything from the leaf up to the outermost
// check frame is the check (including callees like _raw_spin_lock); above it, copy helpers are
// skipped; the first remaining frame is the call site. A stack with no check frame (probe mode
// hands the caller frames only) starts at its first frame. The syscall comes from the outermost
// syscall entry frame (__x64_sys_X, __arm64_sys_X, __do_sys_X, __se_sys_X, __sys_X, ksys_X).
class CallsiteFolder {
 public:
  explicit CallsiteFolder(FoldingRules rules);

  FoldedCallsite fold(std::span<const std::string> frames_leaf_first) const;

  const FoldingRules& rules() const { return rules_; }

 private:
  FoldingRules rules_;
};

// Syscall name for a syscall number of the architecture hucprof is built for (x86_64: "recvfrom"
// for 45; arm64: "recvfrom" for 207), nullopt when unknown or < 0.
std::optional<std::string> syscall_name(int nr);

}  // namespace hucprof
