#include "export/views/folded_stacks.h"

#include <algorithm>
#include <vector>

#include "core/base/quoted_value.h"
#include "core/profile/flame_tree.h"
#include "core/symbols/folding_rules.h"
#include "export/pprof/pprof_format.h"
#include "export/views/count_lookup.h"

namespace hucprof {

namespace {

std::string folded_frame(const FlameNode& node) {
  std::string name = printable_name(node.name);
  std::replace(name.begin(), name.end(), ';', ':');
  return node.inlined ? name + "_[i]" : name;
}

// Every node whose own count (its value less its children's) is not zero ends a stack.
void fold(const FlameNode& node, const std::string& path, std::string& out) {
  uint64_t children = 0;
  for (const FlameNode& child : node.children) {
    children += child.value;
    fold(child, path + ";" + folded_frame(child), out);
  }
  if (node.value > children) out += path + " " + std::to_string(node.value - children) + "\n";
}

}  // namespace

std::string folded_stacks(const StackProfile& profile) {
  const FlameNode root =
      build_flame_tree(profile, profile.sampling ? kSamples : kCalls, FoldingRules::defaults(), "");
  std::string out;
  for (const FlameNode& top : root.children) fold(top, folded_frame(top), out);
  if (!profile.sampling) return out;
  const uint64_t kernel = count_of(profile.sampled_by_context, "kernel");
  const uint64_t interrupts = count_of(profile.excluded_samples, "interrupt");
  const uint64_t in_checks = root.value;
  const uint64_t kernel_rest =
      kernel > in_checks + interrupts ? kernel - in_checks - interrupts : 0;
  const std::string rest(kRestFrame);
  const std::string kernel_frame = rest + ";" + std::string(kKernelRestFrame);
  for (const auto& [stack, n] :
       {std::pair{kernel_frame, kernel_rest},
        std::pair{kernel_frame + ";" + std::string(kInterruptFrame), interrupts},
        std::pair{rest + ";" + std::string(kUserRestFrame),
                  count_of(profile.sampled_by_context, "user")}}) {
    if (n) out += stack + " " + std::to_string(n) + "\n";
  }
  return out;
}

}  // namespace hucprof
