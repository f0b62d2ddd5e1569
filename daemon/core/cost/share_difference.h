#pragma once
#include "core/cost/share_interval.h"

namespace hucprof {

// How much a sampled share changed between two independent recordings (`hucprof report --diff
// BASE`), and whether the change is beyond noise. The interval of the difference is Newcombe's
// hybrid score interval ("Interval estimation for the difference between independent
// proportions: comparison of eleven methods", Statistics in Medicine 17 (1998) 873-890, method
// 10): it combines each share's Wilson interval (core/cost/share_interval.h, on the effective
// counts k / d, n / d with the design effect d) and, like them, stays sensible with few or no hits.
struct ShareChange {
  double base = 0, current = 0;  // the two shares
  double change = 0;             // current - base
  ShareInterval interval;        // of the change, 95 %
  // The interval excludes 0: the change is more than sampling noise.
  bool beyond_noise() const { return interval.lower > 0 || interval.upper < 0; }
};

ShareChange share_change(double base_k, double base_n, double current_k, double current_n,
                         double design_effect = kMinDesignEffect);

}  // namespace hucprof
