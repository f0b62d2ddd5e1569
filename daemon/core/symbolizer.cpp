#include "core/symbolizer.h"

namespace hucprof {

KallsymsSymbolizer::KallsymsSymbolizer(KallsymsIndex index, Loader loader)
    : index_(std::move(index)), loader_(std::move(loader)) {}

std::optional<std::string> KallsymsSymbolizer::name(uint64_t addr) {
  auto frame = index_.resolve(addr);
  if (!frame && reload_allowed_ && loader_) {
    reload_allowed_ = false;
    index_ = loader_();
    reloaded_ = true;
    frame = index_.resolve(addr);
  }
  if (!frame) return std::nullopt;
  return std::move(frame->name);
}

bool KallsymsSymbolizer::begin_interval() {
  bool was = reloaded_;
  reloaded_ = false;
  reload_allowed_ = true;
  return was;
}

}  // namespace hucprof
