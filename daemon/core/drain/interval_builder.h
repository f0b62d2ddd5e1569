#pragma once
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <tuple>
#include <vector>

#include "core/drain/aggregator.h"
#include "core/drain/delta_tracker.h"
#include "core/drain/raw_drain.h"
#include "core/symbols/callsite_folder.h"
#include "core/symbols/stack_symbolizer.h"
#include "core/symbols/symbolizer.h"
#include "core/symbols/task_labels.h"
#include "core/workload/workload_names.h"

namespace hucprof {

// raw kernel counters + stacks → symbolized, folded per-interval deltas. Pure: the kernel edge
// hands it a RawDrain, the aggregator takes what it returns.
//
// Folds are cached per raw key (an immediate caller or a stack id never changes meaning while
// kallsyms is unchanged), so steady-state drains cost map reads, not symbol lookups. A fold
// unused for kFoldKeepDrains drains is forgotten: the cache holds what recent drains saw, not
// every key of a months-long run (a busy machine brings thousands of new stacks a minute).
//
// Every delta also goes out by full stack (IntervalDeltas::stacks) for profiles. Stack ids are
// content hashes, so a symbolized stack is cached by its id like a fold, and forgotten the same
// way; the profile store keeps its own (interned) copy of every stack it was given.
//
// With the kernel's debuginfo looked up in the background (SourceSymbolizer), a stack some of
// whose lines are still being looked up is unfinished: the counts go out at once (checks,
// samples), while its profile stack and its share of the copy families are held until a later
// drain has the lines, at most kHoldDrains drains (then they go out with the lines known).
class IntervalBuilder {
 public:
  explicit IntervalBuilder(CallsiteFolder folder);

  // workloads names the cgroups of sampled tasks, and of probed checks keyed by cgroup
  // (--probe.workloads); without it, nothing carries a workload.
  IntervalDeltas build(const RawDrain& drain, Symbolizer& symbols,
                       WorkloadNames* workloads = nullptr);
  // Everything held goes out into `out` now, finished or not (a recording's first and last
  // drain, once the lookups had their chance).
  void release_held(IntervalDeltas& out, Symbolizer& symbols) {
    forget_folds_if_stale(symbols);
    release(out, symbols, true);
  }
  size_t cached_folds() const { return site_folds_.size() + sample_folds_.size(); }
  // Profile stacks held for their lines.
  size_t held() const { return held_.size(); }

  // At least 2: a late sub-check key is folded through the check key of the drain before.
  static constexpr uint64_t kFoldKeepDrains = 2;
  // Lookups take milliseconds each; a drain full of new call sites is answered within a few
  // intervals even at the shortest one. Past this, the stack goes out with what is known.
  static constexpr uint64_t kHoldDrains = 20;
  // A bound on memory, should the lookups fall far behind: past it, nothing more is held.
  static constexpr size_t kMaxHeld = 16384;

 private:
  // What symbols say changed (Symbolizer::generation moved since the last fold): fold (and
  // symbolize stacks) everything again.
  void forget_folds_if_stale(const Symbolizer& symbols);
  // A site key without its generation: what the call site is.
  using SiteTuple = std::tuple<uint64_t, uint64_t, int32_t, uint8_t>;
  // A profile stack, or while some of its lines are still being looked up, the kernel's
  // addresses to symbolize it again from (the kernel deletes its stacks after the drain).
  struct Stack {
    StackPtr stack;                             // null while unfinished
    std::shared_ptr<const StackFrames> frames;  // set while unfinished
    bool sampled = false;  // the leaf is a sampled instruction, not a return address
  };
  struct Fold {
    FoldedCallsite site;
    const char* drop = nullptr;  // a user-space drop reason that applies to every event here
    Stack stack;                 // sampling: the sample's symbolized stack
    LabelsPtr labels;            // the profile labels of the key it was folded for
    std::string copy;            // sampling: copy_label(stack), once finished
  };
  // A profile sample held for its stack's lines.
  struct Held {
    Stack stack;
    int subcheck = -1;  // the sub-check kind whose function tops the stack, -1: none
    LabelsPtr labels;   // without the copy label
    ProfileValues values{};
    uint64_t events = 0;            // what it counts as lost if its stack is the overflow one
    std::optional<CopyDelta> copy;  // its share of the copy families (copy still "")
    uint64_t since = 0;             // the drain that held it
  };
  // Entries by key, each forgotten once no drain used it for a while.
  template <typename Key, typename Value>
  class RecentCache {
   public:
    Value* find(const Key& key, uint64_t now) {
      auto it = entries_.find(key);
      if (it == entries_.end()) return nullptr;
      it->second.used = now;
      return &it->second.value;
    }
    const Value& put(const Key& key, Value value, uint64_t now) {
      return entries_.insert_or_assign(key, Entry{std::move(value), now}).first->second.value;
    }
    void forget_unused_since(uint64_t drain) {
      std::erase_if(entries_, [&](const auto& e) { return e.second.used < drain; });
    }
    void clear() { entries_.clear(); }
    size_t size() const { return entries_.size(); }

   private:
    struct Entry {
      Value value;
      uint64_t used = 0;
    };
    std::map<Key, Entry> entries_;
  };

  static SiteTuple tuple_of(const huc_site_key& key);
  Fold fold_site(const huc_site_key& key, const RawDrain& drain, Symbolizer& symbols);
  void add_slab_objects(const RawDrain& drain, Symbolizer& symbols,
                        std::map<std::string, uint64_t> slab_checks, IntervalDeltas& out);
  Fold fold_sample(const huc_sample_key& key, const RawDrain& drain, Symbolizer& symbols);
  Fold fold_frames(const ResolvedStack& frames) const;
  std::string syscall_label(int32_t nr, const FoldedCallsite& folded) const;
  // The stack a site's counts go out with: the full stack the kernel captured for its key in
  // this generation; without one (stack map full), the call site's from a recent drain, else
  // what the key itself holds (own_stack).
  Stack site_stack(const RawSiteCount& site, const RawDrain& drain, Symbolizer& symbols);
  // The stack of a sub-check or timing key: that of the check key of the same call site in this
  // drain or, for one that came a drain late, the drain before; else own_stack.
  Stack key_stack(const huc_site_key& key, const RawDrain& drain, Symbolizer& symbols);
  // The check, then the key's short stack or its immediate caller. complete: false when the
  // short stack was missing from the drain (then the check alone).
  Stack own_stack(const huc_site_key& key, const RawDrain& drain, Symbolizer& symbols,
                  bool& complete);
  // A kernel stack symbolized: finished, or unfinished if lines are still being looked up.
  Stack make_stack(const StackFrames& frames, bool sampled, Symbolizer& symbols);
  Stack make_stack(const StackFrames& frames, bool sampled, ResolvedStack resolved, bool answered);
  // An unfinished stack symbolized again: finished once its lines are in, or when `force`d
  // (with the lines known so far).
  void finish(Stack& stack, Symbolizer& symbols, bool force = false);
  // A sampling fold's copy label and labels, once its stack is finished.
  void finish_sample(Fold& fold, const huc_sample_key& key, Symbolizer& symbols);
  LabelsPtr site_labels(const huc_site_key& key, const FoldedCallsite& site);
  LabelsPtr sample_labels(const huc_sample_key& key, const FoldedCallsite& site);
  void add_stack(IntervalDeltas& out, StackPtr stack, LabelsPtr labels, ProfileValue value,
                 uint64_t n);
  // A profile sample and its copy share: out now if its stack is finished, else held.
  void offer(IntervalDeltas& out, Held held, Symbolizer& symbols);
  void emit(IntervalDeltas& out, Held held, Symbolizer& symbols);
  void release(IntervalDeltas& out, Symbolizer& symbols, bool all);
  // The copy function a stack's check was reached through, as its metric label: "" without
  // debuginfo (the output stays as it was without), "[unknown]" where it has no lines.
  std::string copy_label(const ProfileStack& stack, const Symbolizer& symbols) const;
  void forget_unused();
  // The busy samples of the drain by workload.
  void add_busy(IntervalDeltas& out, const RawDrain& drain, WorkloadNames& workloads);
  // The workload labels of cgroup_id (name, kind) where there are names and a cgroup, else
  // those `labels` have.
  using WorkloadLabels = std::pair<std::string_view, std::string_view>;
  WorkloadLabels workload_labels(const LabelsPtr& labels, uint64_t cgroup_id,
                                 WorkloadNames* workloads);
  // labels with the workload of cgroup_id, where there are names and a cgroup.
  LabelsPtr with_workload(LabelsPtr labels, uint64_t cgroup_id, WorkloadNames* workloads);

  CallsiteFolder folder_;
  StackSymbolizer stacks_;
  uint64_t drain_ = 0;               // drains built so far: the caches' clock
  uint64_t symbols_generation_ = 0;  // Symbolizer::generation the caches were filled under
  RecentCache<SiteTuple, Fold> site_folds_;
  RecentCache<uint64_t, Fold> sample_folds_;   // by stack id
  RecentCache<uint64_t, Stack> full_stacks_;   // symbolized, by stack id
  RecentCache<SiteTuple, Stack> site_stacks_;  // the stack each call site's counts last had
  std::vector<Held> held_;                     // in the order held
  TaskLabels tasks_;                           // the comms and pids check samples are named by

  // The per-CPU arrays stay cumulative in the kernel.
  DeltaTracker<uint32_t> contexts_, excluded_, drops_, helper_walks_;
  MissedRuns missed_;
  DeltaTracker<int> rescued_;
};

}  // namespace hucprof
