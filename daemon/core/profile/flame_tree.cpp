#include "core/profile/flame_tree.h"

#include <algorithm>
#include <map>
#include <memory>
#include <optional>
#include <utility>
#include <vector>

#include "core/kernel/interrupt_entries.h"
#include "core/symbols/symbol_name.h"

namespace hucprof {

namespace {

// Built with maps (lookup by name), then turned into sorted vectors.
struct Building {
  uint64_t value = 0;
  FrameKind kind = FrameKind::Kernel;
  bool inlined = false;
  std::optional<SourceLine> line;  // the first stack's; cleared to the file when another differs
  bool mixed = false;
  // Inlined calls apart from real frames of the same name.
  std::map<std::pair<std::string, bool>, std::unique_ptr<Building>> children;
};

// One function of a stack as a flame graph draws it, outermost first.
struct Step {
  const std::string* name;
  bool inlined;
  const SourceLine* line;  // null without source lines
};

// A frame's own function, then the calls inlined into it, outer to inner.
void push_steps(const ProfileFrame& frame, std::vector<Step>& out) {
  if (!frame.source || frame.source->empty()) {
    out.push_back({&frame.function, false, nullptr});
    return;
  }
  const SourceLines& lines = *frame.source;
  out.push_back({&frame.function, false, &lines.back()});
  for (size_t i = lines.size() - 1; i-- > 0;) out.push_back({&lines[i].function, true, &lines[i]});
}

std::string source_text(const Building& b) {
  if (!b.line) return "";
  return b.mixed ? b.line->file : file_line(*b.line);
}

FrameKind kind_of(std::string_view function, const FoldingRules& rules) {
  const std::string_view name = normalize_symbol(function);
  if (rules.check_functions.contains(name)) return FrameKind::Check;
  if (rules.copy_helpers.contains(name)) return FrameKind::CopyHelper;
  return FrameKind::Kernel;
}

FlameNode finish(std::string name, const Building& b) {
  FlameNode node{std::move(name), b.kind, b.value, {}, b.inlined, source_text(b)};
  node.children.reserve(b.children.size());
  for (const auto& [key, child] : b.children) node.children.push_back(finish(key.first, *child));
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
    std::vector<Step> steps;
    for (auto it = s.stack->rbegin(); it != s.stack->rend(); ++it) push_steps(**it, steps);
    if (steps.size() > kMaxFlameDepth) steps.resize(kMaxFlameDepth);
    for (const Step& step : steps) {
      auto child = at->children.find({*step.name, step.inlined});
      if (child == at->children.end()) {
        auto fresh = std::make_unique<Building>();
        // What a check calls (spinlocks, lookups) is the check's cost too; an interrupt that
        // landed in it, and everything above that, is not (core/kernel/interrupt_entries.h).
        const std::string& function = *step.name;
        const bool interrupt = InterruptEntries::defaults().names(function);
        fresh->kind = at->kind == FrameKind::Check && !interrupt ? FrameKind::Check
                      : interrupt                                ? FrameKind::Kernel
                                                                 : kind_of(function, rules);
        fresh->inlined = step.inlined;
        if (step.line) fresh->line = *step.line;
        child = at->children.emplace(std::pair{function, step.inlined}, std::move(fresh)).first;
      } else if (Building& b = *child->second; b.line && step.line && *b.line != *step.line) {
        if (b.line->file != step.line->file) b.line->file.clear();
        b.mixed = true;
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
