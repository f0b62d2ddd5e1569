#pragma once
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <optional>

#include "core/cost/speedup_prediction.h"
#include "core/drain/aggregator.h"
#include "core/drain/drain_source.h"
#include "core/drain/interval_builder.h"
#include "core/profile/profile_store.h"
#include "core/symbols/source_symbolizer.h"
#include "core/symbols/symbolizer.h"
#include "hucprof.pb.h"

namespace hucprof {

// One drain, the whole sequence: read what the programs counted (DrainSource), bring the symbols
// up to date, fold the interval, add it up (metrics) and keep its stacks (profiles), then the
// snapshot with its prediction. The daemon runs it on the kernel's maps
// (app/profiling_pipeline.h); the unit tests and the benchmarks on a synthetic kernel.
class DrainStep {
 public:
  struct Config {
    size_t top_k = 0;
    std::chrono::duration<double> prediction_window{300};
    // The profiles'; its sampling and latency flags also turn on the prediction's estimators.
    StackProfile header;
    double started_at = 0;         // monotonic seconds where counting starts, from zero
    hucprof::v1::Snapshot status;  // fixed after start-up: probes, build, hardened
  };
  // What a drain found that its caller may tell the operator.
  struct Notes {
    std::optional<size_t> kallsyms_reloaded;  // text symbols, when modules changed
    bool lookups_late = false;                // settle: the debuginfo lookups were not done in time
  };

  // `names`: kallsyms; `sources`: with the kernel's debuginfo (lines, inline calls), or nullptr.
  // Both outlive the step.
  DrainStep(Config config, KallsymsSymbolizer& names, SourceSymbolizer* sources);

  // end_interval: a periodic drain, which closes the profile store's interval. settle: first
  // wait (kSettleLimit at most) for the debuginfo lookups still out and hold nothing back for
  // them (a recording's first and last drain). Returns the snapshot.
  hucprof::v1::Snapshot run(DrainSource& source, bool end_interval, bool settle, Notes& notes);

  void set_top_k(size_t top_k) { aggregator_.set_top_k(top_k); }
  ProfileStore& profiles() { return profiles_; }

  // How long a settling drain waits for the lookups: seconds of lookups are a drain full of new
  // call sites spread over the whole kernel.
  static constexpr std::chrono::milliseconds kSettleLimit{10000};

 private:
  // Folds the interval read, with the symbols as of now; settle as in run().
  IntervalDeltas build(DrainSource& source, const RawDrain& raw, bool settle, Notes& notes);

  KallsymsSymbolizer& names_;
  SourceSymbolizer* sources_;
  IntervalBuilder builder_;
  Aggregator aggregator_;
  ProfileStore profiles_;
  SpeedupPrediction prediction_;
  hucprof::v1::Snapshot status_;
};

// Nanoseconds since the Unix epoch, the clock of Snapshot and StackProfile times.
int64_t unix_now_ns();
// A steady clock's time point in seconds, the clock of drain times (`at`).
double monotonic_seconds(std::chrono::steady_clock::time_point t);

}  // namespace hucprof
