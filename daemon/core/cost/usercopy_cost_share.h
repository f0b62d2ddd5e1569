#pragma once
#include <chrono>
#include <cstdint>
#include <map>
#include <optional>
#include <string>

#include <vector>

#include "core/cost/share_interval.h"
#include "core/drain/drain_window.h"

namespace hucprof {

// One estimator's cumulative counters at one drain, in one unit (CPU samples, or nanoseconds):
// the cost counted inside the hardened-usercopy checks per call site, and the busy CPU (kernel +
// user, idle excluded) over all CPUs in the same unit.
struct CostCounters {
  std::map<std::string, uint64_t> in_checks;  // by call site
  uint64_t busy = 0;

  CostCounters& operator+=(const CostCounters& more);
};

// The share of busy CPU spent inside the checks over one window, and what switching them off
// would give back to CPU-bound work.
struct CostShare {
  double window_seconds = 0;  // the span covered: shorter than asked while history is shorter
  uint64_t busy = 0;          // increase of the denominator in the window
  uint64_t in_checks = 0;     // increase of the numerator, summed over call sites
  std::map<std::string, double> by_callsite;  // in_checks increase / busy increase
  std::map<std::string, uint64_t> in_checks_by_callsite;
  // The window's increases point by point (the drains, thinned as DrainWindow keeps them),
  // oldest first: their spread is what the samples say about their own independence. Every
  // call site has one batch per point, as the total.
  std::vector<Batch> batches;
  std::map<std::string, std::vector<Batch>> batches_by_callsite;
  double share = 0;  // sum over call sites
  // 1 / (1 - share): the predicted speed-up of CPU-bound work with the checks off. Absent when
  // share >= 1 (an estimator that counts more than all busy time has no finite answer).
  std::optional<double> speedup;
};

// What removing work that takes `share` of busy CPU gives CPU-bound work: 1 / (1 - share).
// nullopt when share >= 1 (no finite answer) or negative.
std::optional<double> speedup_without(double share);

// Windowed share over cumulative counters, the way Prometheus' increase() sees them: a counter
// that went down was reset and counts from zero; a call site seen for the first time started at
// zero. The window is a DrainWindow: the same drains as ProfileStore::window() when both are
// observed at the same times.
class UsercopyCostShare {
 public:
  static constexpr size_t kMaxHistory = DrainWindow<CostCounters>::kMaxPoints;

  explicit UsercopyCostShare(std::chrono::duration<double> window);

  // Cumulative counters at monotonic time `at` (seconds). Times must not go backwards. The first
  // observation is where counting starts: what it had counted already is in no window.
  void observe(double at, const CostCounters& counters);
  // Over the last `window` (or all history when shorter). nullopt when the window is empty:
  // fewer than two observations, or no busy CPU counted between them.
  std::optional<CostShare> estimate() const;

 private:
  // As last observed, to detect resets; a call site absent from an observation keeps its last
  // value (a label out of the top-K is not exported, and resumes from its value if it comes
  // back: that is no increase).
  CostCounters last_raw_;
  DrainWindow<CostCounters> window_;
};

}  // namespace hucprof
