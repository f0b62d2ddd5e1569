#pragma once
#include <cstdint>
#include <map>
#include <mutex>
#include <utility>
#include <vector>

#include "core/aggregator.h"
#include "core/stack_profile.h"

namespace hucprof {

// Where profiles come from: every drain's stacks (IntervalDeltas::stacks) summed by stack and
// labels since start, plus what the last interval added. Top-K does not apply (profiles hold
// stacks, not series); the size is bounded by the number of distinct stacks (StackInterner's
// limit) times the label sets each is seen with. Thread-safe: the drain loop adds, HTTP handlers
// read copies (cheap: stacks are shared, never copied).
class ProfileStore {
 public:
  // What every profile of this store says about how it was made (StackProfile's other fields).
  explicit ProfileStore(StackProfile header);

  // One drain's stacks and denominator, drained at now_unix_ns.
  void add(const IntervalDeltas& deltas, int64_t now_unix_ns);
  // The end of a periodic interval: what was added since the previous end becomes
  // last_interval(). Extra drains (a profile request's) add without ending one.
  void close_interval(int64_t now_unix_ns);

  StackProfile cumulative() const;     // from start to the last add()
  StackProfile last_interval() const;  // between the last two close_interval()s

 private:
  using Key = std::pair<const ProfileStack*, const ProfileLabels*>;  // both interned

  mutable std::mutex mutex_;
  StackProfile header_;
  std::map<Key, size_t> index_;  // → totals_ / open_
  std::vector<ProfileSample> totals_;
  std::vector<ProfileValues> open_;  // added since the last close_interval()
  std::map<std::string, uint64_t> open_contexts_;
  int64_t last_add_ns_ = 0;
  int64_t last_close_ns_ = 0;
  StackProfile last_interval_;
};

}  // namespace hucprof
