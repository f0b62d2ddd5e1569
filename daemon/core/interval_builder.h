#pragma once
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <tuple>
#include <vector>

#include "core/aggregator.h"
#include "core/callsite_folder.h"
#include "core/delta_tracker.h"
#include "core/raw_drain.h"
#include "core/stack_symbolizer.h"
#include "core/symbolizer.h"

namespace hucprof {

// raw kernel counters + stacks → symbolized, folded per-interval deltas. Pure: the kernel edge
// hands it a RawDrain, the aggregator takes what it returns.
//
// Folds are cached per raw key (an immediate caller or a stack id never changes meaning while
// kallsyms is unchanged), so steady-state drains cost map reads, not symbol lookups. Every delta
// also goes out by full stack (IntervalDeltas::stacks) for profiles, symbolized once per key.
class IntervalBuilder {
 public:
  explicit IntervalBuilder(CallsiteFolder folder);

  IntervalDeltas build(const RawDrain& drain, Symbolizer& symbols);
  // kallsyms changed: fold everything again.
  void invalidate_folds();

 private:
  using SiteTuple = std::tuple<uint64_t, int32_t, int32_t, uint8_t>;
  struct Fold {
    FoldedCallsite site;
    const char* drop = nullptr;  // a user-space drop reason that applies to every event here
    StackPtr stack;              // sampling: the sample's symbolized stack
    LabelsPtr labels;            // the profile labels of the key it was folded for
  };

  static SiteTuple tuple_of(const huc_site_key& key);
  Fold fold_site(const huc_site_key& key, const RawDrain& drain, Symbolizer& symbols);
  Fold fold_sample(const huc_sample_key& key, const RawDrain& drain, Symbolizer& symbols);
  Fold fold_frames(const std::vector<uint64_t>& addrs, Symbolizer& symbols) const;
  std::string syscall_label(int32_t nr, const FoldedCallsite& folded) const;
  // A probe key's stack: its full stack once read, until then what the key itself holds.
  // full_stack_id: RawSiteCount's (-1: none was captured), nullopt when not known here.
  StackPtr site_stack(const huc_site_key& key, std::optional<int32_t> full_stack_id,
                      const RawDrain& drain, Symbolizer& symbols);
  LabelsPtr site_labels(const huc_site_key& key, const FoldedCallsite& site);
  LabelsPtr sample_labels(const huc_sample_key& key, const FoldedCallsite& site);
  void add_stack(IntervalDeltas& out, StackPtr stack, LabelsPtr labels, ProfileValue value,
                 uint64_t n);

  CallsiteFolder folder_;
  StackSymbolizer stacks_;
  std::map<SiteTuple, Fold> site_folds_;
  std::map<int32_t, Fold> sample_folds_;
  // Probe keys' full stacks: a key keeps the first stack it was seen with for good.
  std::map<SiteTuple, StackPtr> site_stacks_;

  DeltaTracker<SiteTuple> site_calls_, site_bytes_;
  DeltaTracker<std::pair<SiteTuple, uint32_t>> subchecks_;
  DeltaTracker<std::pair<SiteTuple, uint32_t>> latency_;
  DeltaTracker<std::pair<int32_t, int32_t>> samples_;
  DeltaTracker<uint32_t> contexts_, drops_, helper_walks_;
};

}  // namespace hucprof
