#include "core/speedup_prediction.h"

#include <string>

namespace hucprof {
namespace {

CostCounters sampling_counters(const hucprof::v1::Snapshot& s) {
  CostCounters out;
  for (const auto& series : s.cpu_samples()) out.in_checks[series.callsite()] += series.samples();
  for (const auto& series : s.sampled()) {
    if (series.context() != "idle") out.busy += series.samples();
  }
  return out;
}

CostCounters latency_counters(const hucprof::v1::Snapshot& s) {
  CostCounters out;
  for (const auto& series : s.latency()) out.in_checks[series.callsite()] += series.sum_ns();
  out.busy = s.busy_cpu_ns();
  return out;
}

void write(const std::string& estimator, const std::optional<CostShare>& share,
           hucprof::v1::Snapshot& s) {
  if (!share) return;
  auto* out = s.add_predictions();
  out->set_estimator(estimator);
  out->set_window_seconds(share->window_seconds);
  out->set_share(share->share);
  if (share->speedup) out->set_speedup(*share->speedup);
  for (const auto& [callsite, value] : share->by_callsite) {
    auto* site = out->add_callsites();
    site->set_callsite(callsite);
    site->set_share(value);
    if (auto speedup = speedup_without(value)) site->set_speedup(*speedup);
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

void SpeedupPrediction::update(double at, hucprof::v1::Snapshot& snapshot) {
  snapshot.clear_predictions();
  if (sampling_) {
    sampling_->observe(at, sampling_counters(snapshot));
    write("sampling", sampling_->estimate(), snapshot);
  }
  // Without a /proc/stat reading there is no denominator; skipping the drain keeps the window's
  // busy counter from looking like a reset.
  if (latency_ && snapshot.busy_cpu_ns() > 0) {
    latency_->observe(at, latency_counters(snapshot));
    write("latency", latency_->estimate(), snapshot);
  }
}

}  // namespace hucprof
