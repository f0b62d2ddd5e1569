#include "core/cost/speedup_prediction.h"

#include <algorithm>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "core/cost/share_interval.h"
#include "core/drain/top_k_ranking.h"

namespace hucprof {
namespace {

CostCounters counters_of(const CallsiteTotals& in_checks, uint64_t busy) {
  return CostCounters{in_checks.by_callsite, busy};
}

struct CallsiteCounts {
  double in_checks = 0;
  std::vector<Batch> batches;
  void add(double k, const std::vector<Batch>& more) {
    in_checks += k;
    if (batches.empty()) {
      batches = more;
      return;
    }
    for (size_t i = 0; i < batches.size() && i < more.size(); ++i) batches[i].k += more[i].k;
  }
};

// A call site the snapshot does not name now is "other"'s: its part of the window, and what it
// counted in the window before it left the top-K (core/drain/aggregator.h).
std::map<std::string, CallsiteCounts> bounded_callsites(const CostShare& share,
                                                        const std::set<std::string>& exported) {
  std::map<std::string, CallsiteCounts> out;
  for (const auto& [callsite, k] : share.in_checks_by_callsite) {
    const std::string& label = exported.contains(callsite) ? callsite : std::string(kOtherCallsite);
    out[label].add(static_cast<double>(k), share.batches_by_callsite.at(callsite));
  }
  return out;
}

// The latency estimator's interval (core/cost/share_interval.h); a share stays at most 1.
ShareInterval bucket_share_interval(double share) {
  ShareInterval interval = bucket_interval(share);
  interval.upper = std::min(1.0, interval.upper);
  return interval;
}

enum class Counting { Samples, Nanoseconds };

void write(const std::string& estimator, Counting counting, const std::optional<CostShare>& share,
           const std::set<std::string>& exported, hucprof::v1::Snapshot& s) {
  if (!share) return;
  auto* out = s.add_predictions();
  out->set_estimator(estimator);
  out->set_window_seconds(share->window_seconds);
  out->set_share(share->share);
  out->set_in_checks(static_cast<double>(share->in_checks));
  out->set_busy(static_cast<double>(share->busy));
  if (counting == Counting::Samples) {
    const ShareEstimate total =
        estimate_share(static_cast<double>(share->in_checks), static_cast<double>(share->busy),
                       share->window_seconds, design_effect(share->batches));
    out->set_lower(total.interval.lower);
    out->set_upper(total.interval.upper);
    out->set_decided(total.decided);
    out->set_design_effect(total.design_effect);
    if (total.needed_span) out->set_needed_window_seconds(*total.needed_span);
  } else {
    const ShareInterval interval = bucket_share_interval(share->share);
    out->set_lower(interval.lower);
    out->set_upper(interval.upper);
    out->set_decided(true);  // every check timed: nothing left to collect
    out->set_design_effect(1);
  }
  if (share->speedup) out->set_speedup(*share->speedup);
  const double busy = static_cast<double>(share->busy);
  for (const auto& [callsite, counts] : bounded_callsites(*share, exported)) {
    auto* site = out->add_callsites();
    const double value = counts.in_checks / busy;
    site->set_callsite(callsite);
    site->set_share(value);
    site->set_in_checks(counts.in_checks);
    if (auto speedup = speedup_without(value)) site->set_speedup(*speedup);
    if (counting == Counting::Samples) {
      const ShareEstimate e =
          estimate_share(counts.in_checks, busy, 0, design_effect(counts.batches));
      site->set_lower(e.interval.lower);
      site->set_upper(e.interval.upper);
      site->set_design_effect(e.design_effect);
      // A part is not answered before the whole: a call site with one sample among thousands
      // is known to be small, but next to a headline still collecting it would read as the
      // only answer there is.
      site->set_decided(e.decided && out->decided());
    } else {
      const ShareInterval interval = bucket_share_interval(value);
      site->set_lower(interval.lower);
      site->set_upper(interval.upper);
      site->set_design_effect(1);
      site->set_decided(true);
    }
  }
}

}  // namespace

SpeedupPrediction::SpeedupPrediction(std::chrono::duration<double> window, bool sampling,
                                     bool latency) {
  if (sampling) sampling_.emplace(window);
  if (latency) latency_.emplace(window);
}

void SpeedupPrediction::start(double at) {
  if (sampling_) sampling_->observe(at, CostCounters{});
}

void SpeedupPrediction::update(double at, const CostTotals& totals, uint64_t busy_cpu_ns,
                               hucprof::v1::Snapshot& out) {
  out.clear_predictions();
  if (sampling_) {
    sampling_->observe(at, counters_of(totals.check_samples, totals.busy_samples));
    write("sampling", Counting::Samples, sampling_->estimate(), totals.check_samples.exported, out);
  }
  // Without a /proc/stat reading there is no denominator; skipping the drain keeps the window's
  // busy counter from looking like a reset.
  if (latency_ && busy_cpu_ns > 0) {
    latency_->observe(at, counters_of(totals.check_ns, busy_cpu_ns));
    write("latency", Counting::Nanoseconds, latency_->estimate(), totals.check_ns.exported, out);
  }
}

}  // namespace hucprof
