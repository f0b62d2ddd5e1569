#include "core/cost/share_difference.h"

#include <gtest/gtest.h>

namespace hucprof {
namespace {

// Newcombe, "Interval estimation for the difference between independent proportions:
// comparison of eleven methods", Statistics in Medicine 17 (1998) 873-890, Table II, method 10
// (the score interval from Wilson's, no continuity correction), to the four decimals printed
// there. Without a design effect (d = 1) the intervals are his.
TEST(ShareChange, MatchesNewcombesTable) {
  struct Case {
    double k1, n1, k2, n2, lower, upper;  // the difference k1/n1 - k2/n2
  };
  for (const Case& c : {Case{56, 70, 48, 80, 0.0524, 0.3339}, Case{9, 10, 3, 10, 0.1705, 0.8090},
                        Case{0, 10, 0, 10, -0.2775, 0.2775}}) {
    // current - base: the table's first proportion is the current one.
    const ShareChange s = share_change(c.k2, c.n2, c.k1, c.n1, 1.0);
    EXPECT_NEAR(s.change, c.k1 / c.n1 - c.k2 / c.n2, 1e-12);
    EXPECT_NEAR(s.interval.lower, c.lower, 0.00005) << c.k1 << "/" << c.n1;
    EXPECT_NEAR(s.interval.upper, c.upper, 0.00005) << c.k1 << "/" << c.n1;
  }
}

TEST(ShareChange, BeyondNoiseOnlyWhereTheIntervalExcludesZero) {
  EXPECT_TRUE(share_change(48, 80, 56, 70, 1.0).beyond_noise());
  EXPECT_TRUE(share_change(56, 70, 48, 80, 1.0).beyond_noise());  // a fall as well as a rise
  EXPECT_FALSE(share_change(0, 10, 0, 10, 1.0).beyond_noise());
  // 2 % and 2.4 % of 10 000 busy samples each: within noise at the report's design effect.
  EXPECT_FALSE(share_change(200, 10000, 240, 10000).beyond_noise());
  // 2 % and 4 %: not.
  EXPECT_TRUE(share_change(200, 10000, 400, 10000).beyond_noise());
}

TEST(ShareChange, TheDesignEffectWidensTheInterval) {
  const ShareChange plain = share_change(200, 10000, 300, 10000, 1.0);
  const ShareChange report = share_change(200, 10000, 300, 10000);
  EXPECT_LT(report.interval.lower, plain.interval.lower);
  EXPECT_GT(report.interval.upper, plain.interval.upper);
  EXPECT_DOUBLE_EQ(report.change, plain.change);
}

TEST(ShareChange, AnEmptySideSaysNothing) {
  const ShareChange s = share_change(0, 0, 50, 1000);
  EXPECT_EQ(s.base, 0.0);
  EXPECT_FALSE(s.beyond_noise());
}

}  // namespace
}  // namespace hucprof
