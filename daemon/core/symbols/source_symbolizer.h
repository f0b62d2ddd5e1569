#pragma once
#include <chrono>
#include <compare>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <set>
#include <string>

#include "core/base/lru_cache.h"
#include "core/symbols/source_lines.h"
#include "core/symbols/source_resolver.h"
#include "core/symbols/symbolizer.h"

namespace hucprof {

class SourceLookups;

// Kallsyms names every frame; this adds the source lines, each distinct address asked of the
// resolver once (cached, at most max_addresses; answers without lines are cached too, so an
// address outside the debuginfo costs one lookup, not one per drain).
//
// In the background (the daemon), a new address is handed to a worker thread (SourceLookups)
// and its frame goes out without lines for now; unanswered() counts such frames, so that the
// interval builder holds back what needs the lines until a later drain has them. In the drain
// (tests, the benchmark's reference), the lookup happens right there.
class SourceSymbolizer : public Symbolizer {
 public:
  static constexpr size_t kDefaultMaxAddresses = 16384;  // one kernel stack map's worth of stacks
  enum class Lookups { InTheDrain, InTheBackground };

  SourceSymbolizer(Symbolizer& names, SourceResolver& resolver, Lookups lookups,
                   size_t max_addresses = kDefaultMaxAddresses);
  ~SourceSymbolizer() override;

  std::optional<std::string> name(uint64_t addr) override { return names_.name(addr); }
  std::optional<ResolvedFrame> frame(uint64_t addr) override { return with_source(addr, 0); }
  std::optional<ResolvedFrame> return_frame(uint64_t addr) override { return with_source(addr, 1); }
  bool has_sources() const override;
  uint64_t unanswered() const override { return unanswered_; }
  // The names' generation and every arrival of debuginfo: both change what a frame says.
  uint64_t generation() const override { return names_.generation() + debuginfo_arrivals_; }

  // Once per drain, before symbolizing: the background's answers come in. True when new
  // debuginfo arrived: what was folded and symbolized before is stale (the generation moved; the
  // address cache is dropped here).
  bool begin_interval();
  // Once per drain, after symbolizing: what the lookups mapped in may be given back.
  void end_interval();
  // The kernel's module list changed: module addresses are looked up (and verified) again.
  void modules_changed();
  // In the background: blocks until every address asked so far is answered, at most `limit`
  // (the answers come in at the next begin_interval). True when all were.
  bool wait_answered(std::chrono::milliseconds limit);
  size_t cached_addresses() const { return cache_.size(); }
  uint64_t lookups() const { return lookups_; }

 private:
  std::optional<ResolvedFrame> with_source(uint64_t addr, uint64_t back);

  Symbolizer& names_;
  SourceResolver& resolver_;
  LruCache<SourceAddress, SourceLinesPtr> cache_;
  uint64_t lookups_ = 0;
  uint64_t unanswered_ = 0;
  bool asked_since_batch_ = false;
  // In the background: the addresses with the worker, and which of its answers still count
  // (a module reload or new debuginfo makes earlier answers stale).
  std::unique_ptr<SourceLookups> background_;
  std::set<SourceAddress> asked_;
  uint64_t generation_ = 0;
  uint64_t debuginfo_arrivals_ = 0;
};

}  // namespace hucprof
