#include "core/symbols/source_symbolizer.h"

#include <utility>

#include "core/symbols/source_lookups.h"

namespace hucprof {

SourceSymbolizer::SourceSymbolizer(Symbolizer& names, SourceResolver& resolver, Lookups lookups,
                                   size_t max_addresses)
    : names_(names), resolver_(resolver), cache_(max_addresses) {
  if (lookups == Lookups::InTheBackground) {
    background_ = std::make_unique<SourceLookups>(resolver, max_addresses);
  }
}

SourceSymbolizer::~SourceSymbolizer() = default;

bool SourceSymbolizer::has_sources() const {
  return background_ ? background_->ready() : resolver_.ready();
}

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
  if (!background_) {
    ++lookups_;
    frame->source = cache_.put(at, resolver_.lines(at));
    return frame;
  }
  // Asked once; a full queue is asked again when the address is next seen.
  ++unanswered_;
  if (!asked_.contains(at) && background_->ask(at, generation_)) {
    asked_.insert(at);
    ++lookups_;
    asked_since_batch_ = true;
  }
  return frame;
}

bool SourceSymbolizer::begin_interval() {
  if (!background_) {
    resolver_.start_threads();
    if (!resolver_.take_news()) return false;
    cache_.clear();
    ++debuginfo_arrivals_;
    return true;
  }
  SourceLookups::Answers answers = background_->take();
  for (SourceLookups::Answer& a : answers.lines) {
    if (a.generation != generation_) continue;
    asked_.erase(a.at);
    cache_.put(a.at, std::move(a.lines));
  }
  if (!answers.news) return false;
  cache_.clear();
  asked_.clear();
  ++generation_;
  ++debuginfo_arrivals_;
  return true;
}

void SourceSymbolizer::end_interval() {
  if (!background_) {
    resolver_.end_batch();
  } else if (std::exchange(asked_since_batch_, false)) {
    // Only after drains that asked: a steady drain does not even wake the worker.
    background_->end_batch();
  }
}

void SourceSymbolizer::modules_changed() {
  cache_.clear();
  if (!background_) {
    resolver_.modules_changed();
    return;
  }
  background_->modules_changed();
  asked_.clear();
  ++generation_;
}

bool SourceSymbolizer::wait_answered(std::chrono::milliseconds limit) {
  return !background_ || background_->wait_answered(limit);
}

}  // namespace hucprof
