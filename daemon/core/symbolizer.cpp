#include "core/symbolizer.h"

namespace hucprof {

KallsymsSymbolizer::KallsymsSymbolizer(KallsymsIndex index, Loader loader)
    : index_(std::move(index)), loader_(std::move(loader)) {}

std::optional<ResolvedFrame> Symbolizer::frame(uint64_t addr) {
  auto found = name(addr);
  if (!found) return std::nullopt;
  return ResolvedFrame{std::move(*found), "", 0, 0};
}

std::optional<std::string> KallsymsSymbolizer::name(uint64_t addr) {
  auto found = frame(addr);
  if (!found) return std::nullopt;
  return std::move(found->name);
}

std::optional<ResolvedFrame> KallsymsSymbolizer::frame(uint64_t addr) {
  auto found = index_.resolve(addr);
  if (!found && reload_allowed_ && loader_) {
    reload_allowed_ = false;
    index_ = loader_();
    reloaded_ = true;
    found = index_.resolve(addr);
  }
  return found;
}

bool KallsymsSymbolizer::begin_interval() {
  bool was = reloaded_;
  reloaded_ = false;
  reload_allowed_ = true;
  return was;
}

}  // namespace hucprof
