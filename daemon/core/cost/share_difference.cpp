#include "core/cost/share_difference.h"

#include <algorithm>
#include <cmath>

namespace hucprof {

ShareChange share_change(double base_k, double base_n, double current_k, double current_n,
                         double design_effect) {
  const double d = std::max(design_effect, 1.0);
  ShareChange out;
  out.base = base_n > 0 ? base_k / base_n : 0;
  out.current = current_n > 0 ? current_k / current_n : 0;
  out.change = out.current - out.base;
  const ShareInterval b = wilson_interval(base_k / d, base_n / d);
  const ShareInterval c = wilson_interval(current_k / d, current_n / d);
  // Each side's distance to its own Wilson bound, combined as independent errors.
  out.interval.lower = out.change - std::hypot(out.current - c.lower, b.upper - out.base);
  out.interval.upper = out.change + std::hypot(c.upper - out.current, out.base - b.lower);
  return out;
}

}  // namespace hucprof
