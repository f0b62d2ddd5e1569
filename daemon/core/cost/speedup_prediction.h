#pragma once
#include <chrono>
#include <cstdint>
#include <optional>

#include "core/cost/usercopy_cost_share.h"
#include "core/drain/cost_totals.h"
#include "hucprof.pb.h"

namespace hucprof {

// "What would hardened_usercopy=off save?", decided once per drain from the aggregator's
// cumulative counters (core/drain/cost_totals.h), by up to two estimators:
//
//   sampling  CPU samples inside the checks (usercopy_cpu_samples_total, per call site) over
//             kernel + user samples (usercopy_sampled_cpu_samples_total, idle left out)
//   latency   time inside __check_object_size (usercopy_check_duration_seconds_sum, probe mode
//             with --latency) over busy CPU time from /proc/stat (Snapshot.busy_cpu_ns)
//
// Each is windowed (UsercopyCostShare) and written into Snapshot.predictions, per call site under
// the labels the snapshot exports (the rest as "other"); an estimator that is off, or whose
// window holds no busy CPU yet, writes nothing (no NaN, no made-up zero).
class SpeedupPrediction {
 public:
  SpeedupPrediction(std::chrono::duration<double> window, bool sampling, bool latency);

  // Counting starts at monotonic time `at` with the sampler's counters at zero, so the first
  // drain's samples are inside the window (the /proc/stat counter of the latency estimator runs
  // since boot: its window starts at its first update()).
  void start(double at);
  // `at`: monotonic seconds of this drain; `busy_cpu_ns`: /proc/stat's busy CPU time since boot
  // (0: unread). Replaces `out`'s predictions.
  void update(double at, const CostTotals& totals, uint64_t busy_cpu_ns,
              hucprof::v1::Snapshot& out);

 private:
  std::optional<UsercopyCostShare> sampling_;
  std::optional<UsercopyCostShare> latency_;
};

}  // namespace hucprof
