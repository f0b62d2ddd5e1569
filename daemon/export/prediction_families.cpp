#include "export/prediction_families.h"

#include <utility>

#include "export/family_builder.h"

namespace hucprof {

namespace {
constexpr double kNsPerSecond = 1e9;
}

void add_prediction_families(const hucprof::v1::Snapshot& snapshot,
                             std::vector<prometheus::MetricFamily>& out) {
  using prometheus::MetricType;

  FamilyBuilder busy(
      "usercopy_busy_cpu_seconds_total",
      "Busy CPU time of all CPUs (user, nice, system, irq, softirq from /proc/stat; idle, iowait "
      "and steal left out): the denominator of usercopy_check_duration_seconds_sum.",
      MetricType::Counter, {});
  if (snapshot.busy_cpu_ns() > 0) busy.add({}, snapshot.busy_cpu_ns() / kNsPerSecond);
  out.push_back(std::move(busy).build());

  FamilyBuilder share(
      "usercopy_checks_busy_cpu_ratio",
      "Share of busy CPU time (kernel + user, idle excluded) spent inside the hardened-usercopy "
      "checks over the last --prediction.window, by estimator (sampling: CPU samples; latency: "
      "check time over /proc/stat busy time).",
      MetricType::Gauge, {"estimator"});
  FamilyBuilder speedup(
      "usercopy_checks_off_speedup_ratio",
      "Predicted speed-up of CPU-bound work if the checks were off (hardened_usercopy=off): "
      "1 / (1 - usercopy_checks_busy_cpu_ratio). Absent when that share is 1 or more.",
      MetricType::Gauge, {"estimator"});
  FamilyBuilder site_share(
      "usercopy_callsite_busy_cpu_ratio",
      "Share of busy CPU time spent inside the checks of one kernel call site over the last "
      "--prediction.window; the call sites add up to usercopy_checks_busy_cpu_ratio.",
      MetricType::Gauge, {"estimator", "callsite"});
  FamilyBuilder site_speedup(
      "usercopy_callsite_off_speedup_ratio",
      "Predicted speed-up of CPU-bound work if only this call site's checks were gone: "
      "1 / (1 - usercopy_callsite_busy_cpu_ratio).",
      MetricType::Gauge, {"estimator", "callsite"});
  FamilyBuilder window(
      "usercopy_prediction_window_seconds",
      "Time span the current prediction covers: --prediction.window, or less while the daemon "
      "has run for less than that.",
      MetricType::Gauge, {"estimator"});
  for (const auto& p : snapshot.predictions()) {
    share.add({p.estimator()}, p.share());
    if (p.has_speedup()) speedup.add({p.estimator()}, p.speedup());
    window.add({p.estimator()}, p.window_seconds());
    for (const auto& site : p.callsites()) {
      site_share.add({p.estimator(), site.callsite()}, site.share());
      if (site.has_speedup()) site_speedup.add({p.estimator(), site.callsite()}, site.speedup());
    }
  }
  out.push_back(std::move(share).build());
  out.push_back(std::move(speedup).build());
  out.push_back(std::move(site_share).build());
  out.push_back(std::move(site_speedup).build());
  out.push_back(std::move(window).build());
}

}  // namespace hucprof
