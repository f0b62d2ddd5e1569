#pragma once
#include <chrono>
#include <cstdint>
#include <list>
#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "core/drain/aggregator.h"
#include "core/drain/drain_window.h"
#include "core/symbols/stack_profile.h"

namespace hucprof {

// Where profiles come from: every drain's stacks (IntervalDeltas::stacks) summed by stack and
// labels since start, plus what the last interval added and what the last `window` added. Top-K
// does not apply (profiles hold stacks, not series). Thread-safe: the drain loop adds, HTTP
// handlers read copies (cheap: stacks and labels are shared, never copied).
//
// Bounded however long it runs and however many workloads come and go (a node that starts a
// container per CI job): stacks are bounded by StackInterner's limit, and workloads are named
// one by one while they are recent. Once kNamedWorkloads are named, a new one folds the least
// recently seen, if that one was last added to before the window's start: its samples and busy
// CPU move to the same stacks and labels under kFoldedWorkload ("[other workloads]"), and its
// name is forgotten (seen again, it is named anew). So the window (the web view) names every
// workload it holds, the since-start profile at least the kNamedWorkloads last seen, and sums
// stay exact. At most kMaxNamedWorkloads are named at once: past that, a new workload goes to
// kFoldedWorkload directly (a burst of that many workloads within one window). Comms (the task
// labels of check samples, core/task_labels.h) are named the same way, with kNamedComms and
// kMaxNamedComms, folded into kFoldedComm ("[other comms]"). difference() knows both folds, so
// windows cut out of two cumulative profiles stay exact.
class ProfileStore {
 public:
  static constexpr size_t kNamedWorkloads = 256;
  static constexpr size_t kMaxNamedWorkloads = 1024;
  static constexpr size_t kNamedComms = 256;
  static constexpr size_t kMaxNamedComms = 1024;

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

  struct Size {
    size_t samples = 0;           // (stack, labels) entries of the since-start profile
    size_t label_sets = 0;        // distinct labels among them
    size_t named_workloads = 0;   // workloads named one by one
    size_t folded_workloads = 0;  // workloads folded into kFoldedWorkload since start
    size_t named_comms = 0;       // comms named one by one
    size_t folded_comms = 0;      // comms folded into kFoldedComm since start
  };
  Size size() const;

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
    std::optional<uint64_t> skipped_samples;  // unset: this drain could not count them
    BusyByWorkload workloads;
    Added& operator+=(const Added& more);
  };
  // A workload named one by one: when it was last added to, and its entries of totals_.
  struct Named {
    double last_at = 0;
    std::vector<size_t> slots;
    std::list<std::string>::iterator order;
    uint64_t naming = 0;  // WorkloadBusy::named of its busy CPU
  };

  // The name `workload` is kept under from this drain on: itself, or kFoldedWorkload.
  std::string_view admit(const std::string& workload, double at);
  // Folds the least recently seen named workloads that are outside the window, while
  // kNamedWorkloads or more are named.
  void fold_quiet();
  // Moves a slot's counts, cumulative and open, to the entry of its stack under `labels`
  // (a fold's), and frees the slot's key; returns that entry's slot.
  size_t move_entry(size_t slot, ProfileLabels labels);
  void fold(const std::string& workload, std::map<size_t, size_t>& moved);
  // A comm named one by one: when it was last added to.
  struct NamedComm {
    double last_at = 0;
    std::list<std::string>::iterator order;
  };
  // The comm `comm` is kept under from this drain on: itself, or kFoldedComm.
  std::string_view admit_comm(const std::string& comm, double at);
  // Folds the least recently seen named comms outside the window, while kNamedComms or more are
  // named: their entries move to the same stacks and labels under kFoldedComm.
  void fold_quiet_comms();
  // What the window's drains added to the slots in `moved` goes to the slots they moved to.
  void move_in_window(const std::map<size_t, size_t>& moved);
  // The store's own copy of `labels` (equal labels, one pointer): a workload folded and seen
  // again gets new ones, so difference() never takes its new samples for the old ones.
  LabelsPtr own(const ProfileLabels& labels);
  // The entry of (stack, labels), made if new (in a freed slot where there is one).
  size_t slot_of(const StackPtr& stack, const LabelsPtr& labels);

  mutable std::mutex mutex_;
  StackProfile header_;
  std::map<Key, size_t> index_;        // → totals_ / open_
  std::vector<ProfileSample> totals_;  // a folded entry's slot is empty until reused
  std::vector<ProfileValues> open_;    // added since the last close_interval()
  std::vector<size_t> free_;           // empty slots of totals_
  std::map<ProfileLabels, LabelsPtr> labels_;
  std::map<std::string, Named, std::less<>> named_;
  std::list<std::string> named_order_;  // most recently added to first
  size_t folded_workloads_ = 0;
  std::map<std::string, NamedComm, std::less<>> named_comms_;
  std::list<std::string> named_comms_order_;  // most recently added to first
  size_t folded_comms_ = 0;
  uint64_t namings_ = 0;
  std::map<std::string, uint64_t> open_contexts_, open_excluded_, open_missed_;
  std::optional<uint64_t> open_skipped_;
  BusyByWorkload open_workloads_;
  int64_t last_add_ns_ = 0;
  int64_t last_close_ns_ = 0;
  StackProfile last_interval_;
  DrainWindow<Added> window_;
};

}  // namespace hucprof
