#include "core/symbols/stack_symbolizer.h"

#include <utility>

#include "core/symbols/symbol_name.h"
#include "hucprof_abi.h"

namespace hucprof {

namespace {

constexpr std::string_view kCheckFunction = "__check_object_size";
constexpr std::string_view kUnknownFunction = "[unknown]";

// BPF code in kallsyms: programs ("bpf_prog_<tag>_<name>") and trampolines, in module "bpf".
bool is_bpf_machinery(const ProfileFrame& frame) {
  return frame.module == "bpf" || frame.function.starts_with("bpf_trampoline_") ||
         frame.function.starts_with("bpf_prog_");
}

}  // namespace

ResolvedStack resolve_stack(const std::vector<uint64_t>& addrs, Symbolizer& symbols,
                            bool leaf_is_sampled) {
  ResolvedStack out;
  out.reserve(addrs.size());
  for (size_t i = 0; i < addrs.size(); ++i) {
    out.push_back(i == 0 && leaf_is_sampled ? symbols.frame(addrs[i])
                                            : symbols.return_frame(addrs[i]));
  }
  return out;
}

StackSymbolizer::StackSymbolizer(FoldingRules rules, size_t max_stacks)
    : rules_(std::move(rules)), interner_(max_stacks) {}

FramePtr StackSymbolizer::frame(std::optional<ResolvedFrame> resolved) {
  // An address outside every symbol is named as unknown, never printed: it would reveal KASLR.
  if (!resolved) return named(kUnknownFunction);
  return interner_.frame(ProfileFrame{std::move(resolved->name), std::move(resolved->module),
                                      resolved->offset, resolved->text_offset,
                                      std::move(resolved->source)});
}

FramePtr StackSymbolizer::named(std::string_view function) {
  return interner_.frame(ProfileFrame{std::string(function), "", 0, 0});
}

bool StackSymbolizer::is_check(const ProfileFrame& frame) const {
  return rules_.check_functions.contains(normalize_symbol(frame.function));
}

StackPtr StackSymbolizer::sampled(ResolvedStack resolved) {
  ProfileStack frames;
  frames.reserve(resolved.size());
  for (auto& r : resolved) frames.push_back(frame(std::move(r)));
  return interner_.stack(frames);
}

StackPtr StackSymbolizer::probed(ResolvedStack resolved) {
  ProfileStack frames;
  frames.reserve(resolved.size() + 1);
  for (auto& r : resolved) frames.push_back(frame(std::move(r)));
  size_t first_check = 0;
  while (first_check < frames.size() && !is_check(*frames[first_check])) ++first_check;
  if (first_check < frames.size()) {
    frames.erase(frames.begin(), frames.begin() + static_cast<std::ptrdiff_t>(first_check));
  } else {
    size_t first_kernel = 0;
    while (first_kernel < frames.size() && is_bpf_machinery(*frames[first_kernel])) {
      ++first_kernel;
    }
    frames.erase(frames.begin(), frames.begin() + static_cast<std::ptrdiff_t>(first_kernel));
    frames.insert(frames.begin(), named(kCheckFunction));
  }
  return interner_.stack(frames);
}

StackPtr StackSymbolizer::with_subcheck(const StackPtr& stack, uint32_t kind) {
  ProfileStack frames;
  frames.reserve(stack->size() + 1);
  frames.push_back(named(subcheck_function(kind)));
  frames.insert(frames.end(), stack->begin(), stack->end());
  return interner_.stack(frames);
}

std::string_view subcheck_function(uint32_t kind) {
  switch (kind) {
    case HUC_CHECK_SLAB:
      return "__check_heap_object";
    case HUC_CHECK_VMALLOC:
      return "find_vmap_area";
    case HUC_CHECK_STACK:
      return "check_stack_object";
    case HUC_CHECK_TEXT:
      return "check_kernel_text_object";
    case HUC_CHECK_PAGE:
      return "__virt_addr_valid";
    case HUC_CHECK_HEAP:
      return "check_heap_object";
  }
  return "[unknown sub-check]";
}

}  // namespace hucprof
