#include "core/symbols/copy_path.h"

#include <optional>
#include <utility>

#include "core/symbols/symbol_name.h"

namespace hucprof {

namespace {

// The frame that calls the outermost check and the call site above it, as indices into the
// stack; nullopt when there is no check, or nothing above it.
std::optional<std::pair<size_t, size_t>> caller_and_site(const ProfileStack& stack,
                                                         const FoldingRules& rules) {
  // The outermost check frame: what it calls is the check's own cost, what calls it the copy.
  std::optional<size_t> caller;
  for (size_t i = 0; i < stack.size(); ++i) {
    if (rules.check_functions.contains(normalize_symbol(stack[i]->function))) caller = i + 1;
  }
  if (!caller || *caller >= stack.size()) return std::nullopt;
  size_t site = *caller;
  while (site + 1 < stack.size() &&
         rules.copy_helpers.contains(normalize_symbol(stack[site]->function))) {
    ++site;
  }
  return std::pair{*caller, site};
}

std::string copy_in(const ProfileFrame& caller, const FoldingRules& rules) {
  // Only the caller's own lines can name the copy: a frame further up would name a function
  // that did not copy.
  if (!caller.source) return "";
  for (const SourceLine& line : *caller.source) {
    if (rules.check_wrappers.contains(line.function) ||
        rules.check_functions.contains(line.function)) {
      continue;
    }
    return line.function;
  }
  return "";
}

}  // namespace

std::string copy_function(const ProfileStack& stack, const FoldingRules& rules) {
  const auto found = caller_and_site(stack, rules);
  return found ? copy_in(*stack[found->first], rules) : "";
}

CopyPath copy_path(const ProfileStack& stack, const FoldingRules& rules) {
  CopyPath out;
  const auto found = caller_and_site(stack, rules);
  if (!found) return out;
  const auto [caller, site] = *found;
  for (size_t i = caller; i <= site; ++i) {
    const ProfileFrame& frame = *stack[i];
    if (frame.source && !frame.source->empty()) {
      for (size_t l = 0; l < frame.source->size(); ++l) {
        out.steps.push_back({(*frame.source)[l], l + 1 < frame.source->size()});
      }
    } else {
      out.steps.push_back({{std::string(normalize_symbol(frame.function)), "", 0}, false});
    }
  }
  out.copy = copy_in(*stack[caller], rules);
  return out;
}

std::string copy_chain_text(const CopyPath& path) {
  std::string out;
  // Outermost first, down to the copy function (the check wrappers below it add nothing).
  for (auto it = path.steps.rbegin(); it != path.steps.rend(); ++it) {
    out += (out.empty() ? "" : " → ") + it->line.function;
    if (it->line.function == path.copy) break;
  }
  return out;
}

}  // namespace hucprof
