#include "core/flame_tree.h"

#include <algorithm>
#include <map>
#include <memory>

#include "core/interrupt_entries.h"
#include "core/symbol_name.h"

namespace hucprof {

namespace {

// Built with maps (lookup by name), then turned into sorted vectors.
struct Building {
  uint64_t value = 0;
  FrameKind kind = FrameKind::Kernel;
  std::map<std::string, std::unique_ptr<Building>, std::less<>> children;
};

FrameKind kind_of(std::string_view function, const FoldingRules& rules) {
  const std::string_view name = normalize_symbol(function);
  if (rules.check_functions.contains(name)) return FrameKind::Check;
  if (rules.copy_helpers.contains(name)) return FrameKind::CopyHelper;
  return FrameKind::Kernel;
}

FlameNode finish(std::string name, const Building& b) {
  FlameNode node{std::move(name), b.kind, b.value, {}};
  node.children.reserve(b.children.size());
  for (const auto& [child_name, child] : b.children)
    node.children.push_back(finish(child_name, *child));
  return node;
}

}  // namespace

FlameNode build_flame_tree(const StackProfile& profile, ProfileValue value,
                           const FoldingRules& rules, std::string root_name) {
  Building root;
  root.kind = FrameKind::Root;
  for (const ProfileSample& s : profile.samples) {
    const uint64_t n = s.values[value];
    if (n == 0 || !s.stack) continue;
    root.value += n;
    Building* at = &root;
    // Stacks are leaf first; a flame graph grows from the outermost frame. Kernel stacks are at
    // most 127 frames; a file from elsewhere may claim any depth, and everything here recurses.
    size_t depth = 0;
    for (auto it = s.stack->rbegin(); it != s.stack->rend() && depth < kMaxFlameDepth;
         ++it, ++depth) {
      const std::string& function = (*it)->function;
      auto child = at->children.find(function);
      if (child == at->children.end()) {
        auto fresh = std::make_unique<Building>();
        // What a check calls (spinlocks, lookups) is the check's cost too; an interrupt that
        // landed in it, and everything above that, is not (core/interrupt_entries.h).
        const bool interrupt = InterruptEntries::defaults().names(function);
        fresh->kind = at->kind == FrameKind::Check && !interrupt ? FrameKind::Check
                      : interrupt                                ? FrameKind::Kernel
                                                                 : kind_of(function, rules);
        child = at->children.emplace(function, std::move(fresh)).first;
      }
      at = child->second.get();
      at->value += n;
    }
  }
  return finish(std::move(root_name), root);
}

size_t flame_depth(const FlameNode& node) {
  size_t deepest = 0;
  for (const FlameNode& c : node.children) deepest = std::max(deepest, flame_depth(c));
  return deepest + 1;
}

}  // namespace hucprof
