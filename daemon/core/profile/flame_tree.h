#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "core/symbols/folding_rules.h"
#include "core/symbols/stack_profile.h"

namespace hucprof {

// What a frame is, for a flame graph's colours: the usercopy machinery stands out. Frames a
// check calls count as the check; interrupt entry code and what runs above it do not.
enum class FrameKind { Check, CopyHelper, Kernel, Root };

// A flame graph's data: stacks merged from the root (outermost frame) up, by function name per
// parent; value is the width. Children are in name order, as flame graphs draw them, so a
// function sits at the same place in every graph of the same stacks.
struct FlameNode {
  std::string name;
  FrameKind kind = FrameKind::Kernel;
  uint64_t value = 0;
  std::vector<FlameNode> children;
  // From the kernel's debuginfo: a call the compiler inlined (copy_to_iter in udp_recvmsg), not
  // a frame of its own on the kernel stack; and the source line of this function's call to its
  // child, when every stack merged here agrees on it (else the file alone, or "").
  bool inlined = false;
  std::string source = {};
};

inline constexpr size_t kMaxFlameDepth = 256;  // frames kept from the root end of a stack
                                               // (inlined calls count as frames)

// Every sample with a non-zero `value` contributes its stack. The root is named `root_name`.
FlameNode build_flame_tree(const StackProfile& profile, ProfileValue value,
                           const FoldingRules& rules, std::string root_name);

// The height in frames of the tallest stack (root included).
size_t flame_depth(const FlameNode& node);

}  // namespace hucprof
