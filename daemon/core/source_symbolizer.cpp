#include "core/source_symbolizer.h"

#include <utility>

namespace hucprof {

SourceSymbolizer::SourceSymbolizer(Symbolizer& names, SourceResolver& resolver,
                                   size_t max_addresses)
    : names_(names), resolver_(resolver), cache_(max_addresses) {}

std::optional<ResolvedFrame> SourceSymbolizer::with_source(uint64_t addr, uint64_t back) {
  auto frame = names_.frame(addr);
  if (!frame) return frame;
  // A return address at a symbol's very start returns from a call at the end of the symbol
  // before (a call that never returns); its lines are not this frame's, so it gets none.
  if (frame->offset < back) return frame;
  // Without _stext a vmlinux address cannot be found in the file.
  if (frame->module.empty() && frame->text_offset <= back) return frame;
  SourceAddress at;
  at.module = frame->module;
  at.offset = frame->offset - back;
  if (frame->module.empty()) {
    at.text_offset = frame->text_offset - back;
  } else {
    at.symbol = frame->name;
  }
  if (const SourceLinesPtr* known = cache_.find(at)) {
    frame->source = *known;
    return frame;
  }
  ++lookups_;
  frame->source = cache_.put(at, resolver_.lines(at));
  return frame;
}

void SourceSymbolizer::modules_changed() {
  resolver_.modules_changed();
  cache_.clear();
}

bool SourceSymbolizer::end_interval() {
  resolver_.end_batch();
  if (!resolver_.take_news()) return false;
  cache_.clear();
  return true;
}

}  // namespace hucprof
