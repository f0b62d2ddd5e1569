#include "export/metrics/prediction_families.h"

#include <string>
#include <utility>
#include <vector>

#include "export/metrics/family_builder.h"

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
      "check time over /proc/stat busy time). Only once its 95 % interval is narrow enough to "
      "decide on (docs/metrics.md); before that the bounds and usercopy_prediction_needed_"
      "window_seconds say how far it is.",
      MetricType::Gauge, {"estimator"});
  FamilyBuilder lower(
      "usercopy_checks_busy_cpu_lower_ratio",
      "Lower end of the 95 % interval of usercopy_checks_busy_cpu_ratio (sampling: Wilson's "
      "score interval of the window's samples; latency: the histogram buckets' resolution), "
      "exported while collecting too.",
      MetricType::Gauge, {"estimator"});
  FamilyBuilder upper("usercopy_checks_busy_cpu_upper_ratio",
                      "Upper end of the 95 % interval of usercopy_checks_busy_cpu_ratio.",
                      MetricType::Gauge, {"estimator"});
  FamilyBuilder speedup(
      "usercopy_checks_off_speedup_ratio",
      "Predicted speed-up of CPU-bound work if the checks were off (hardened_usercopy=off): "
      "1 / (1 - usercopy_checks_busy_cpu_ratio). Absent when that share is absent, or 1 or more.",
      MetricType::Gauge, {"estimator"});
  FamilyBuilder site_share(
      "usercopy_callsite_busy_cpu_ratio",
      "Share of busy CPU time spent inside the checks of one kernel call site over the last "
      "--prediction.window, once its own 95 % interval and the headline's are narrow enough to "
      "decide on; all call sites add up to usercopy_checks_busy_cpu_ratio.",
      MetricType::Gauge, {"estimator", "callsite"});
  FamilyBuilder site_lower(
      "usercopy_callsite_busy_cpu_lower_ratio",
      "Lower end of the 95 % interval of usercopy_callsite_busy_cpu_ratio, exported while "
      "collecting too.",
      MetricType::Gauge, {"estimator", "callsite"});
  FamilyBuilder site_upper("usercopy_callsite_busy_cpu_upper_ratio",
                           "Upper end of the 95 % interval of usercopy_callsite_busy_cpu_ratio.",
                           MetricType::Gauge, {"estimator", "callsite"});
  FamilyBuilder site_speedup(
      "usercopy_callsite_off_speedup_ratio",
      "Predicted speed-up of CPU-bound work if only this call site's checks were gone: "
      "1 / (1 - usercopy_callsite_busy_cpu_ratio), where that is exported.",
      MetricType::Gauge, {"estimator", "callsite"});
  FamilyBuilder window(
      "usercopy_prediction_window_seconds",
      "Time span the current prediction covers: --prediction.window, or less while the daemon "
      "has run for less than that.",
      MetricType::Gauge, {"estimator"});
  FamilyBuilder needed(
      "usercopy_prediction_needed_window_seconds",
      "While usercopy_checks_busy_cpu_ratio is still collecting: the window span that would give "
      "it at the rates seen so far (more than --prediction.window: it never will; widen it).",
      MetricType::Gauge, {"estimator"});
  FamilyBuilder check_samples(
      "usercopy_prediction_check_samples",
      "CPU samples inside the checks in the prediction's window (sampling): the count behind "
      "usercopy_checks_busy_cpu_ratio.",
      MetricType::Gauge, {"estimator"});
  FamilyBuilder busy_samples("usercopy_prediction_busy_samples",
                             "Busy (kernel + user) CPU samples in the prediction's window "
                             "(sampling): the denominator of usercopy_checks_busy_cpu_ratio.",
                             MetricType::Gauge, {"estimator"});
  FamilyBuilder design_effect(
      "usercopy_prediction_design_effect",
      "The design effect the sampling interval of usercopy_checks_busy_cpu_ratio is taken with: "
      "the window's drains' spread over the binomial one, at least 1.5 (docs/metrics.md). The "
      "recording rules divide the 5 m counts by it, so their interval is the daemon's.",
      MetricType::Gauge, {"estimator"});
  for (const auto& p : snapshot.predictions()) {
    const std::vector<std::string> e = {p.estimator()};
    if (p.decided()) {
      share.add(e, p.share());
      if (p.has_speedup()) speedup.add(e, p.speedup());
    } else if (p.has_needed_window_seconds()) {
      needed.add(e, p.needed_window_seconds());
    }
    lower.add(e, p.lower());
    upper.add(e, p.upper());
    window.add(e, p.window_seconds());
    if (p.estimator() == "sampling") {
      check_samples.add(e, p.in_checks());
      busy_samples.add(e, p.busy());
      design_effect.add(e, p.design_effect());
    }
    for (const auto& site : p.callsites()) {
      const std::vector<std::string> labels = {p.estimator(), site.callsite()};
      if (site.decided()) {
        site_share.add(labels, site.share());
        if (site.has_speedup()) site_speedup.add(labels, site.speedup());
      }
      site_lower.add(labels, site.lower());
      site_upper.add(labels, site.upper());
    }
  }
  for (FamilyBuilder* f :
       {&share, &lower, &upper, &speedup, &site_share, &site_lower, &site_upper, &site_speedup,
        &window, &needed, &check_samples, &busy_samples, &design_effect}) {
    out.push_back(std::move(*f).build());
  }
}

}  // namespace hucprof
