#include "core/symbolizer.h"

#include "core/module_list.h"

namespace hucprof {

KallsymsSymbolizer::KallsymsSymbolizer(KallsymsIndex index,
                                       const std::optional<std::string>& modules, Loader loader,
                                       ModuleList module_list)
    : index_(std::move(index)),
      modules_(module_list_signature(modules.value_or(""))),
      loader_(std::move(loader)),
      module_list_(std::move(module_list)) {}

std::optional<std::string> KallsymsSymbolizer::name(uint64_t addr) {
  auto frame = index_.resolve(addr);
  if (!frame) return std::nullopt;
  return std::move(frame->name);
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
