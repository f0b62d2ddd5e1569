#include "core/cost/usercopy_cost_share.h"

namespace hucprof {
namespace {

// What a cumulative counter added since it was last seen; a drop means a reset (the source
// started again from zero), as Prometheus' increase() reads it.
uint64_t increase(uint64_t before, uint64_t now) { return now >= before ? now - before : now; }

uint64_t value_or_zero(const std::map<std::string, uint64_t>& m, const std::string& key) {
  auto it = m.find(key);
  return it == m.end() ? 0 : it->second;
}

}  // namespace

std::optional<double> speedup_without(double share) {
  if (share < 0 || share >= 1) return std::nullopt;
  return 1 / (1 - share);
}

CostCounters& CostCounters::operator+=(const CostCounters& more) {
  for (const auto& [callsite, value] : more.in_checks) in_checks[callsite] += value;
  busy += more.busy;
  return *this;
}

UsercopyCostShare::UsercopyCostShare(std::chrono::duration<double> window)
    : window_(window.count()) {}

void UsercopyCostShare::observe(double at, const CostCounters& counters) {
  CostCounters added;
  added.busy = increase(last_raw_.busy, counters.busy);
  for (const auto& [callsite, value] : counters.in_checks) {
    added.in_checks[callsite] = increase(value_or_zero(last_raw_.in_checks, callsite), value);
    last_raw_.in_checks[callsite] = value;
  }
  last_raw_.busy = counters.busy;
  window_.observe(at, std::move(added));
}

std::optional<CostShare> UsercopyCostShare::estimate() const {
  if (window_.empty() || window_.end() <= window_.start()) return std::nullopt;
  CostCounters sum;
  std::vector<const CostCounters*> points;
  window_.for_each([&](const CostCounters& added) {
    sum += added;
    points.push_back(&added);
  });
  if (sum.busy == 0) return std::nullopt;

  CostShare out;
  out.window_seconds = window_.end() - window_.start();
  out.busy = sum.busy;
  for (const auto& [callsite, value] : sum.in_checks) {
    const double share = static_cast<double>(value) / static_cast<double>(out.busy);
    out.by_callsite[callsite] = share;
    out.in_checks_by_callsite[callsite] = value;
    out.in_checks += value;
    out.share += share;
  }
  for (const CostCounters* point : points) {
    const double busy = static_cast<double>(point->busy);
    double in_checks = 0;
    for (const auto& [callsite, value] : sum.in_checks) {
      const double k = static_cast<double>(value_or_zero(point->in_checks, callsite));
      out.batches_by_callsite[callsite].push_back({k, busy});
      in_checks += k;
    }
    out.batches.push_back({in_checks, busy});
  }
  out.speedup = speedup_without(out.share);
  return out;
}

}  // namespace hucprof
