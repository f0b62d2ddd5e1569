#include "core/usercopy_cost_share.h"

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

UsercopyCostShare::UsercopyCostShare(std::chrono::duration<double> window)
    : window_(window.count()) {}

void UsercopyCostShare::observe(double at, const CostCounters& counters) {
  Point next;
  next.at = at;
  if (latest_) next.total = latest_->total;
  next.total.busy += increase(last_raw_.busy, counters.busy);
  for (const auto& [callsite, value] : counters.in_checks) {
    next.total.in_checks[callsite] += increase(value_or_zero(last_raw_.in_checks, callsite), value);
  }
  // The very first observation is the baseline: what was counted before it is not in any window.
  if (!latest_) next.total = CostCounters{{}, 0};
  last_raw_ = counters;
  latest_ = next;

  if (history_.empty() || at - history_.back().at >= window_ / kMaxHistory) {
    history_.push_back(std::move(next));
  }
  // Keep one point at or before the window start: the baseline of the next estimate.
  while (history_.size() > 1 && history_[1].at <= at - window_) history_.pop_front();
}

std::optional<CostShare> UsercopyCostShare::estimate() const {
  if (!latest_ || history_.empty()) return std::nullopt;
  const Point& base = history_.front();
  const Point& now = *latest_;
  if (now.at <= base.at || now.total.busy <= base.total.busy) return std::nullopt;

  CostShare out;
  out.window_seconds = now.at - base.at;
  out.busy = now.total.busy - base.total.busy;
  for (const auto& [callsite, total] : now.total.in_checks) {
    const double share =
        static_cast<double>(total - value_or_zero(base.total.in_checks, callsite)) / out.busy;
    out.by_callsite[callsite] = share;
    out.share += share;
  }
  out.speedup = speedup_without(out.share);
  return out;
}

}  // namespace hucprof
