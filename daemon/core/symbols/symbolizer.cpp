#include "core/symbols/symbolizer.h"

#include "core/symbols/module_list.h"

namespace hucprof {

KallsymsSymbolizer::KallsymsSymbolizer(KallsymsIndex index,
                                       const std::optional<std::string>& modules, Loader loader,
                                       ModuleList module_list)
    : index_(std::move(index)),
      modules_(module_list_signature(modules.value_or(""))),
      loader_(std::move(loader)),
      module_list_(std::move(module_list)) {}

std::optional<ResolvedFrame> Symbolizer::frame(uint64_t addr) {
  auto found = name(addr);
  if (!found) return std::nullopt;
  return ResolvedFrame{std::move(*found), "", 0, 0, nullptr};
}

std::optional<std::string> KallsymsSymbolizer::name(uint64_t addr) {
  auto found = frame(addr);
  if (!found) return std::nullopt;
  return std::move(found->name);
}

std::optional<ResolvedFrame> KallsymsSymbolizer::frame(uint64_t addr) {
  return index_.resolve(addr);
}

bool KallsymsSymbolizer::begin_interval() {
  if (!module_list_ || !loader_) return false;
  // The list first, then kallsyms: a module loaded in between shows up as a change next time.
  std::string now = module_list_signature(module_list_().value_or(""));
  if (now == modules_) return false;
  modules_ = std::move(now);
  index_ = loader_();
  ++reloads_;
  return true;
}

}  // namespace hucprof
