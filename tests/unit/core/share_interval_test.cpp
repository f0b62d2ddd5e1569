#include "core/cost/share_interval.h"

#include <gtest/gtest.h>

#include <random>
#include <vector>

namespace hucprof {
namespace {

// Newcombe, "Two-sided confidence intervals for the single proportion: comparison of seven
// methods", Statistics in Medicine 17 (1998) 857-872, Table II, method 3 (Wilson's score
// interval without continuity correction), to the four decimals printed there.
TEST(ShareInterval, WilsonMatchesNewcombesTable) {
  struct Case {
    double k, n, lower, upper;
  };
  for (const Case& c : {Case{81, 263, 0.2553, 0.3662}, Case{15, 148, 0.0624, 0.1605},
                        Case{0, 20, 0.0, 0.1611}, Case{1, 29, 0.0061, 0.1718}}) {
    const ShareInterval i = wilson_interval(c.k, c.n);
    EXPECT_NEAR(i.lower, c.lower, 0.00005) << c.k << "/" << c.n;
    EXPECT_NEAR(i.upper, c.upper, 0.00005) << c.k << "/" << c.n;
  }
}

TEST(ShareInterval, EdgesStayInsideZeroAndOne) {
  EXPECT_EQ(wilson_interval(0, 1000).lower, 0.0);
  EXPECT_EQ(wilson_interval(1000, 1000).upper, 1.0);
  const ShareInterval none = wilson_interval(0, 0);
  EXPECT_EQ(none.lower, 0.0);
  EXPECT_EQ(none.upper, 1.0);
}

// The rule the examples break: 3 of 2 busy samples right after start, a handful of
// samples in a 1 s recording, are no verdict; a few hundred in the checks are.
TEST(ShareInterval, AVerdictNeedsANarrowInterval) {
  EXPECT_FALSE(estimate_share(0, 2).decided);
  EXPECT_FALSE(estimate_share(3, 80).decided) << "3.8 % of 80 busy samples";
  EXPECT_FALSE(estimate_share(30, 2000).decided);
  EXPECT_TRUE(estimate_share(217, 7669).decided) << "2.83 % of 7 669 (the README's recording)";
  EXPECT_TRUE(estimate_share(0, 5000).decided) << "nothing in the checks, and known to be little";
  EXPECT_FALSE(estimate_share(0, 1000).decided);
}

TEST(ShareInterval, NeededSpanIsWhereTheSameRatesGiveAVerdict) {
  // 1.4 % of 200 busy samples a second (2 CPUs at 99 Hz, busy).
  const ShareEstimate now = estimate_share(6, 400, 2.0);
  ASSERT_FALSE(now.decided);
  ASSERT_TRUE(now.needed_span.has_value());
  const double span = *now.needed_span;
  EXPECT_GT(span, 2.0);
  EXPECT_TRUE(estimate_share(3 * span, 200 * span).decided) << span;
  EXPECT_FALSE(estimate_share(3 * span * 0.97, 200 * span * 0.97).decided) << span;
  EXPECT_FALSE(estimate_share(0, 0, 5.0).needed_span.has_value()) << "no busy CPU: no rate";
  EXPECT_FALSE(estimate_share(217, 7669, 20).needed_span.has_value()) << "decided already";
}

TEST(ShareInterval, DesignEffectWidensTheInterval) {
  const ShareEstimate least = estimate_share(100, 5000);
  EXPECT_EQ(least.design_effect, kMinDesignEffect);
  const ShareInterval effective = wilson_interval(100 / kMinDesignEffect, 5000 / kMinDesignEffect);
  EXPECT_EQ(least.interval.lower, effective.lower);
  EXPECT_EQ(least.interval.upper, effective.upper);
  const ShareEstimate doubled = estimate_share(100, 5000, 0, 4 * kMinDesignEffect);
  EXPECT_NEAR(doubled.interval.width() / least.interval.width(), 2.0, 0.1);
  EXPECT_EQ(estimate_share(100, 5000, 0, 0.3).design_effect, kMinDesignEffect)
      << "never narrower than measured";
}

// Independent binomial batches: the design effect is near 1. Batches whose share changes from
// one to the next (a phase of the work): well above 1.
TEST(ShareInterval, DesignEffectFromTheBatchesSpread) {
  std::mt19937 rng(42);
  std::vector<Batch> steady, phased;
  for (int i = 0; i < 60; ++i) {
    std::binomial_distribution<int> steady_k(400, 0.02), phased_k(400, i % 2 ? 0.035 : 0.005);
    steady.push_back({static_cast<double>(steady_k(rng)), 400});
    phased.push_back({static_cast<double>(phased_k(rng)), 400});
  }
  EXPECT_LT(design_effect(steady), 1.5);
  EXPECT_GT(design_effect(phased), 2.0);
  EXPECT_EQ(design_effect(std::span(phased).first(kMinBatches - 1)), 1.0) << "too few to say";
  EXPECT_EQ(design_effect(std::vector<Batch>(20, Batch{0, 100})), 1.0);
}

}  // namespace
}  // namespace hucprof
