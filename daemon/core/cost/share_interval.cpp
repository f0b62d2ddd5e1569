#include "core/cost/share_interval.h"

#include <algorithm>
#include <cmath>

namespace hucprof {

ShareInterval wilson_interval(double k, double n) {
  if (!(n > 0)) return {0, 1};
  const double p = std::clamp(k / n, 0.0, 1.0);
  const double z2 = kZ95 * kZ95;
  const double denominator = 1 + z2 / n;
  const double center = (p + z2 / (2 * n)) / denominator;
  const double half = kZ95 * std::sqrt(p * (1 - p) / n + z2 / (4 * n * n)) / denominator;
  // At k = 0 (k = n) the lower (upper) bound is 0 (1) exactly, not a rounding away from it.
  return {p == 0 ? 0 : std::max(0.0, center - half), p == 1 ? 1 : std::min(1.0, center + half)};
}

double design_effect(std::span<const Batch> batches) {
  if (batches.size() < kMinBatches) return 1;
  double k = 0, n = 0;
  for (const Batch& b : batches) {
    k += b.k;
    n += b.n;
  }
  if (k <= 0 || n <= 0 || k >= n) return 1;
  const double p = k / n;
  double residuals = 0;
  for (const Batch& b : batches) residuals += (b.k - p * b.n) * (b.k - p * b.n);
  const double m = static_cast<double>(batches.size());
  const double batch_variance = m / (m - 1) * residuals / (n * n);
  const double binomial_variance = p * (1 - p) / n;
  return std::max(1.0, batch_variance / binomial_variance);
}

bool decided(double share, const ShareInterval& interval) {
  const double width = interval.width();
  return width <= kMaxWidthOfShare * share || width <= kMaxWidthAbsolute;
}

ShareInterval bucket_interval(double counted) { return {counted * 2 / 3, counted * 4 / 3}; }

namespace {

bool decided_at(double k, double n, double d) {
  return decided(n > 0 ? k / n : 0, wilson_interval(k / d, n / d));
}

}  // namespace

ShareEstimate estimate_share(double k, double n, double span, double design_effect) {
  ShareEstimate out;
  out.k = k;
  out.n = n;
  out.share = n > 0 ? k / n : 0;
  out.design_effect = std::max(kMinDesignEffect, design_effect);
  out.interval = wilson_interval(k / out.design_effect, n / out.design_effect);
  out.decided = n > 0 && decided(out.share, out.interval);
  if (out.decided || !(span > 0) || !(n > 0)) return out;
  // The same rates for longer: the interval narrows as 1/sqrt(span), so the needed span is
  // found by doubling, then bisection (to 1 %).
  const double k_rate = k / span, n_rate = n / span;
  double low = span, high = span;
  for (int i = 0; i < 64 && !decided_at(k_rate * high, n_rate * high, out.design_effect); ++i) {
    low = high;
    high *= 2;
  }
  while (high - low > 0.01 * high) {
    const double mid = (low + high) / 2;
    if (decided_at(k_rate * mid, n_rate * mid, out.design_effect)) {
      high = mid;
    } else {
      low = mid;
    }
  }
  out.needed_span = high;
  return out;
}

}  // namespace hucprof
