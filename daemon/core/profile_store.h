#pragma once
#include <chrono>
#include <cstdint>
#include <map>
#include <mutex>
#include <utility>
#include <vector>

#include "core/aggregator.h"
#include "core/drain_window.h"
#include "core/stack_profile.h"

namespace hucprof {

// Where profiles come from: every drain's stacks (IntervalDeltas::stacks) summed by stack and
// labels since start, plus what the last interval added and what the last `window` added. Top-K
// does not apply (profiles hold stacks, not series); the size is bounded by the number of
// distinct stacks (StackInterner's limit) times the label sets each is seen with. Thread-safe:
// the drain loop adds, HTTP handlers read copies (cheap: stacks are shared, never copied).
class ProfileStore {
 public:
  // What every profile of this store says about how it was made (StackProfile's other fields).
  // window(): the span --prediction.window gives the prediction; start_at: monotonic seconds
  // when counting started, the clock of add()'s `at`.
  ProfileStore(StackProfile header, std::chrono::duration<double> window, double start_at);
  // A 5-minute window on the Unix clock (tests, benchmarks).
  explicit ProfileStore(StackProfile header);

  // One drain's stacks and denominator, drained at now_unix_ns, monotonic time `at` (the time
  // the prediction is updated with for the same drain, so window() covers the same drains).
  void add(const IntervalDeltas& deltas, int64_t now_unix_ns, double at);
  void add(const IntervalDeltas& deltas, int64_t now_unix_ns);  // `at` from now_unix_ns
  // The end of a periodic interval: what was added since the previous end becomes
  // last_interval(). Extra drains (a profile request's) add without ending one.
  void close_interval(int64_t now_unix_ns);

  StackProfile cumulative() const;     // from start to the last add()
  StackProfile last_interval() const;  // between the last two close_interval()s
  StackProfile window() const;         // the drains of the last `window` (DrainWindow)

 private:
  using Key = std::pair<const ProfileStack*, const ProfileLabels*>;  // both interned
  // One value added to one entry of totals_: 16 bytes for each value that is not 0, where a
  // whole ProfileValues is 40 (the window keeps up to DrainWindow::kMaxPoints of these sets).
  struct AddedValue {
    uint32_t index = 0;  // into totals_
    uint32_t value = 0;  // ProfileValue
    uint64_t n = 0;
    std::pair<uint32_t, uint32_t> key() const { return {index, value}; }
  };
  // One drain's (or several thinned drains') additions, sorted by key, one per key.
  struct Added {
    std::vector<AddedValue> values;
    std::map<std::string, uint64_t> contexts, excluded, missed_checks;
    BusyByWorkload workloads;
    Added& operator+=(const Added& more);
  };

  mutable std::mutex mutex_;
  StackProfile header_;
  std::map<Key, size_t> index_;  // → totals_ / open_
  std::vector<ProfileSample> totals_;
  std::vector<ProfileValues> open_;  // added since the last close_interval()
  std::map<std::string, uint64_t> open_contexts_, open_excluded_, open_missed_;
  BusyByWorkload open_workloads_;
  int64_t last_add_ns_ = 0;
  int64_t last_close_ns_ = 0;
  StackProfile last_interval_;
  DrainWindow<Added> window_;
};

}  // namespace hucprof
