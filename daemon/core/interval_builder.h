#pragma once
#include <cstdint>
#include <map>
#include <string>
#include <tuple>
#include <vector>

#include "core/aggregator.h"
#include "core/callsite_folder.h"
#include "core/delta_tracker.h"
#include "core/raw_drain.h"
#include "core/symbolizer.h"

namespace hucprof {

// raw kernel counters + stacks → symbolized, folded per-interval deltas. Pure: the kernel edge
// hands it a RawDrain, the aggregator takes what it returns.
//
// Folds are cached per raw key (an immediate caller or a stack id never changes meaning while
// kallsyms is unchanged), so steady-state drains cost map reads, not symbol lookups. A fold
// unused for kFoldKeepDrains drains is forgotten: the cache holds what recent drains saw, not
// every key of a months-long run (a busy machine brings thousands of new stacks a minute).
class IntervalBuilder {
 public:
  explicit IntervalBuilder(CallsiteFolder folder);

  IntervalDeltas build(const RawDrain& drain, Symbolizer& symbols);
  // kallsyms changed: fold everything again.
  void invalidate_folds();
  size_t cached_folds() const { return site_folds_.size() + sample_folds_.size(); }

  // At least 2: a late sub-check key is folded through the check key of the drain before.
  static constexpr uint64_t kFoldKeepDrains = 2;

 private:
  // A site key without its generation: what the call site is.
  using SiteTuple = std::tuple<uint64_t, uint64_t, int32_t, uint8_t>;
  struct Fold {
    FoldedCallsite site;
    const char* drop = nullptr;  // a user-space drop reason that applies to every event here
  };
  template <typename Key>
  class FoldCache {
   public:
    const Fold* find(const Key& key, uint64_t now) {
      auto it = entries_.find(key);
      if (it == entries_.end()) return nullptr;
      it->second.used = now;
      return &it->second.fold;
    }
    const Fold& put(const Key& key, Fold fold, uint64_t now) {
      return entries_.insert_or_assign(key, Entry{std::move(fold), now}).first->second.fold;
    }
    void forget_unused_since(uint64_t drain) {
      std::erase_if(entries_, [&](const auto& e) { return e.second.used < drain; });
    }
    void clear() { entries_.clear(); }
    size_t size() const { return entries_.size(); }

   private:
    struct Entry {
      Fold fold;
      uint64_t used = 0;
    };
    std::map<Key, Entry> entries_;
  };

  static SiteTuple tuple_of(const huc_site_key& key);
  Fold fold_site(const huc_site_key& key, const RawDrain& drain, Symbolizer& symbols);
  Fold fold_sample(const huc_sample_key& key, const RawDrain& drain, Symbolizer& symbols);
  Fold fold_frames(const std::vector<uint64_t>& addrs, Symbolizer& symbols) const;
  std::string syscall_label(int32_t nr, const FoldedCallsite& folded) const;

  CallsiteFolder folder_;
  uint64_t drain_ = 0;  // drains built so far: the fold caches' clock
  FoldCache<SiteTuple> site_folds_;
  FoldCache<uint64_t> sample_folds_;  // by stack id

  // The per-CPU arrays stay cumulative in the kernel.
  DeltaTracker<uint32_t> contexts_, drops_, helper_walks_;
};

}  // namespace hucprof
