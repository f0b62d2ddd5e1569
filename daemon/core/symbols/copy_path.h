#pragma once
#include <compare>
#include <string>
#include <vector>

#include "core/symbols/folding_rules.h"
#include "core/symbols/source_lines.h"
#include "core/symbols/stack_profile.h"

namespace hucprof {

// Through which copy a check was reached, from the source lines of a profile stack's frames
// (the kernel's debuginfo): the question "which copy*user() is hot?" that kallsyms alone cannot
// answer, as the copy primitives are inline.

// One function on the way from the call site to the check, with the line of the call in it.
struct CopyStep {
  SourceLine line;       // file "" and line 0 where the frame has no source lines
  bool inlined = false;  // an inlined call, not a frame of its own on the kernel stack

  auto operator<=>(const CopyStep&) const = default;
};

struct CopyPath {
  // The copy function: in the chain from the check up, the first function that is not a check
  // wrapper (check_object_size, check_copy_size): "copy_to_iter" for udp_recvmsg. Empty when
  // the check's caller has no source lines.
  std::string copy;
  // From the check's caller (its inline frames first) up to the call site's own function,
  // innermost first: the copy path a kernel developer reads, with files and lines.
  std::vector<CopyStep> steps;
};

// Stack leaf first, as profiles hold it. The call site is found as the folder finds it (the
// first frame above the checks and the copy helpers).
CopyPath copy_path(const ProfileStack& stack, const FoldingRules& rules);
// copy_path(...).copy alone, without building the steps: what every drain asks of every key.
std::string copy_function(const ProfileStack& stack, const FoldingRules& rules);

// "udp_recvmsg → copy_linear_skb → copy_to_iter": the path from the call site down to the copy
// function, as the design card writes it.
std::string copy_chain_text(const CopyPath& path);

// The metric label of a stack's copy function where the debuginfo has no lines for the check's
// caller (a module without its debuginfo).
inline constexpr const char* kUnknownCopy = "[unknown]";

}  // namespace hucprof
