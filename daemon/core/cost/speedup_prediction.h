#pragma once
#include <chrono>
#include <optional>

#include "core/cost/usercopy_cost_share.h"
#include "hucprof.pb.h"

namespace hucprof {

// "What would hardened_usercopy=off save?", decided once per drain from the cumulative counters
// the snapshot already carries, by up to two estimators:
//
//   sampling  CPU samples inside the checks (usercopy_cpu_samples_total, per call site) over
//             kernel + user samples (usercopy_sampled_cpu_samples_total, idle left out)
//   latency   time inside __check_object_size (usercopy_check_duration_seconds_sum, probe mode
//             with --latency) over busy CPU time from /proc/stat (Snapshot.busy_cpu_ns)
//
// Each is windowed (UsercopyCostShare) and written into Snapshot.predictions; an estimator that
// is off, or whose window holds no busy CPU yet, writes nothing (no NaN, no made-up zero).
class SpeedupPrediction {
 public:
  SpeedupPrediction(std::chrono::duration<double> window, bool sampling, bool latency);

  // Counting starts at monotonic time `at` with the sampler's counters at zero, so the first
  // drain's samples are inside the window (the /proc/stat counter of the latency estimator runs
  // since boot: its window starts at its first update()).
  void start(double at);
  // `at`: monotonic seconds of this drain. Reads the snapshot's counters, replaces its
  // predictions.
  void update(double at, hucprof::v1::Snapshot& snapshot);

 private:
  std::optional<UsercopyCostShare> sampling_;
  std::optional<UsercopyCostShare> latency_;
};

}  // namespace hucprof
