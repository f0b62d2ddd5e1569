#pragma once
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "core/cost/share_interval.h"
#include "hucprof.pb.h"

namespace hucprof {

// What `hucprof top` shows: the call sites ranked by their share of busy CPU over the last
// interval (or since top started), each with its samples and 95 % interval, and probe mode's
// exact checks and bytes. Fed cumulative Snapshots (a daemon's /metrics read back, or top's own
// drains) and ranks by their differences, the way Prometheus' increase() sees counters.

struct TopRow {
  std::string callsite, syscall;
  uint64_t samples = 0;  // in the checks (sampling)
  ShareEstimate share;   // of busy CPU (sampling)
  // The share is an answer: its interval and the total's meet the verdict rule (no part is
  // answered before the whole, as on /metrics). Otherwise it is "collecting".
  bool answered = false;
  std::vector<std::pair<std::string, uint64_t>> steps;  // samples by step, most first
  uint64_t calls = 0, bytes = 0;                        // exact (probe mode)
};

struct TopView {
  bool cumulative = false;  // since top started (or the counters last went back); else interval
  double seconds = 0;       // the span the counts cover
  bool sampling = false, probes = false;
  uint64_t sample_frequency_hz = 0;
  uint64_t kernel = 0, user = 0, idle = 0;  // samples by context; busy = kernel + user
  ShareEstimate total;                      // all call sites' samples of the busy ones
  uint64_t calls = 0, bytes = 0;
  std::vector<TopRow> rows;  // ranked: samples, then calls, bytes, call site, syscall
  bool hardened_usercopy_enabled = true;
};

class TopModel {
 public:
  // readings_are_drains: each reading is a drain made at that moment (top's own programs), so
  // the first one starts an interval. A daemon drains on its own clock (--interval, 10 s by
  // default): a reading that brings no new drain (Snapshot.intervals unchanged) is no interval,
  // and intervals start at the first reading that brings one, since when the counts before it
  // began is unknown.
  explicit TopModel(bool readings_are_drains = true) : readings_are_drains_(readings_are_drains) {}

  enum class Observed {
    First,      // a reading to count from: nothing to compare yet
    Counted,    // a new interval
    WentBack,   // a counter went down: the source restarted; counting starts again from here
    Unchanged,  // no drain since the last reading: the last interval stands
  };
  // A reading at monotonic time `at` (seconds; never backwards) of cumulative counters. A
  // series absent from it keeps its last value (a call site out of the top-K is not exported
  // and resumes from its value when it comes back: no increase, no reset).
  Observed observe(double at, const hucprof::v1::Snapshot& snapshot);
  // The last interval's view, or since start's; nullopt until a second reading.
  std::optional<TopView> view(bool cumulative) const;

 private:
  // The increases over a span (an interval, or the intervals since start added up), with the
  // intervals' own counts as batches: their spread is the design effect of a share since start.
  struct Span {
    double seconds = 0;
    std::map<std::string, uint64_t> contexts;
    // By call site and syscall: samples by step, and exact calls and bytes.
    std::map<std::pair<std::string, std::string>, std::map<std::string, uint64_t>> steps;
    std::map<std::pair<std::string, std::string>, std::pair<uint64_t, uint64_t>> checks;
    std::vector<Batch> batches;
    std::map<std::pair<std::string, std::string>, std::vector<Batch>> row_batches;
  };

  struct Counters {
    std::map<std::tuple<std::string, std::string, std::string>, uint64_t> samples;
    std::map<std::string, uint64_t> contexts;
    std::map<std::tuple<std::string, std::string, std::string>, std::pair<uint64_t, uint64_t>>
        checks;
  };
  static Counters counters_of(const hucprof::v1::Snapshot& snapshot);
  TopView render(const Span& span, bool cumulative) const;

  bool readings_are_drains_;
  bool aligned_ = false;  // the last reading is a drain's moment: intervals can start there
  std::optional<double> last_at_;
  uint64_t last_intervals_ = 0;
  Counters last_;
  std::optional<Span> interval_, since_start_;
  bool sampling_ = false, probes_ = false, hardened_ = true;
  uint64_t sample_frequency_hz_ = 0;
};

}  // namespace hucprof
