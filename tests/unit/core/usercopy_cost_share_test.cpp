#include "core/cost/usercopy_cost_share.h"

#include <gtest/gtest.h>

#include <chrono>
#include <cmath>

namespace hucprof {
namespace {

using std::chrono::seconds;

// Samples inside the checks per call site plus kernel+user samples. Idle samples never reach
// CostCounters: the caller leaves them out, and the tests check that idle-only intervals make
// no difference.
CostCounters counters(std::map<std::string, uint64_t> in_checks, uint64_t busy) {
  return {std::move(in_checks), busy};
}

TEST(UsercopyCostShare, EmptyUntilTwoObservationsWithBusyCpu) {
  UsercopyCostShare share(seconds(300));
  EXPECT_FALSE(share.estimate()) << "no observation";
  share.observe(0, counters({{"udp_recvmsg", 5}}, 100));
  EXPECT_FALSE(share.estimate()) << "one observation is a baseline, not a window";
  // Nothing busy since: all idle. A ratio 0/0 must not become NaN or a made-up 0.
  share.observe(10, counters({{"udp_recvmsg", 5}}, 100));
  EXPECT_FALSE(share.estimate());
  share.observe(20, counters({{"udp_recvmsg", 11}}, 200));
  auto e = share.estimate();
  ASSERT_TRUE(e);
  EXPECT_DOUBLE_EQ(e->share, 0.06);
  EXPECT_DOUBLE_EQ(e->window_seconds, 20);
  EXPECT_EQ(e->busy, 100u);
}

TEST(UsercopyCostShare, SpeedupIsOneOverOneMinusShare) {
  UsercopyCostShare share(seconds(60));
  share.observe(0, counters({}, 0));
  share.observe(10, counters({{"udp_recvmsg", 30}, {"udp_sendmsg", 20}}, 1000));
  auto e = share.estimate();
  ASSERT_TRUE(e);
  EXPECT_DOUBLE_EQ(e->by_callsite.at("udp_recvmsg"), 0.03);
  EXPECT_DOUBLE_EQ(e->by_callsite.at("udp_sendmsg"), 0.02);
  EXPECT_DOUBLE_EQ(e->share, 0.05);
  ASSERT_TRUE(e->speedup);
  EXPECT_DOUBLE_EQ(*e->speedup, 1 / 0.95);
}

TEST(UsercopyCostShare, NoChecksMeansNoSpeedup) {
  UsercopyCostShare share(seconds(60));
  share.observe(0, counters({}, 0));
  share.observe(10, counters({}, 500));
  auto e = share.estimate();
  ASSERT_TRUE(e);
  EXPECT_EQ(e->share, 0);
  EXPECT_TRUE(e->by_callsite.empty());
  EXPECT_EQ(e->speedup, 1.0);
}

TEST(UsercopyCostShare, ShareOfOneOrMoreHasNoFiniteSpeedup) {
  UsercopyCostShare share(seconds(60));
  share.observe(0, counters({}, 0));
  share.observe(10, counters({{"udp_recvmsg", 1200}}, 1000));
  auto e = share.estimate();
  ASSERT_TRUE(e);
  EXPECT_DOUBLE_EQ(e->share, 1.2);
  EXPECT_FALSE(e->speedup);
  share.observe(20, counters({{"udp_recvmsg", 2200}}, 2000));  // exactly 1 over the window
  ASSERT_TRUE(share.estimate());
  EXPECT_FALSE(share.estimate()->speedup);
}

TEST(UsercopyCostShare, IdleTimeDoesNotDiluteTheShare) {
  // The same busy work spread over a window that is mostly idle: the busy counter only moves
  // while the CPU works, so the share is that of the work, however long the window.
  UsercopyCostShare busy_only(seconds(600));
  busy_only.observe(0, counters({}, 0));
  busy_only.observe(10, counters({{"udp_recvmsg", 4}}, 100));
  UsercopyCostShare with_idle(seconds(600));
  with_idle.observe(0, counters({}, 0));
  with_idle.observe(10, counters({{"udp_recvmsg", 4}}, 100));
  for (int t = 20; t <= 500; t += 10) with_idle.observe(t, counters({{"udp_recvmsg", 4}}, 100));
  ASSERT_TRUE(busy_only.estimate() && with_idle.estimate());
  EXPECT_DOUBLE_EQ(with_idle.estimate()->share, busy_only.estimate()->share);
  EXPECT_DOUBLE_EQ(with_idle.estimate()->window_seconds, 500);
}

TEST(UsercopyCostShare, WindowSlidesOverOldIntervals) {
  UsercopyCostShare share(seconds(30));
  // 0..60 s: 10 % of busy time in the checks; 60..120 s: 2 %.
  uint64_t in = 0, busy = 0;
  for (int t = 0; t <= 120; t += 10) {
    share.observe(t, counters({{"udp_recvmsg", in}}, busy));
    in += t < 60 ? 10 : 2;
    busy += 100;
  }
  auto e = share.estimate();
  ASSERT_TRUE(e);
  EXPECT_DOUBLE_EQ(e->window_seconds, 30);
  EXPECT_DOUBLE_EQ(e->share, 0.02) << "only the last 30 s count";
  EXPECT_EQ(e->busy, 300u);
}

TEST(UsercopyCostShare, WindowLongerThanHistoryCoversAllOfIt) {
  UsercopyCostShare share(seconds(3600));
  share.observe(100, counters({}, 1000));  // the daemon started at t=100 with counters > 0
  share.observe(110, counters({{"a", 10}}, 1100));
  share.observe(120, counters({{"a", 30}}, 1300));
  auto e = share.estimate();
  ASSERT_TRUE(e);
  EXPECT_DOUBLE_EQ(e->window_seconds, 20);
  EXPECT_DOUBLE_EQ(e->share, 0.1) << "30 of 300, not counting what came before the first drain";
}

TEST(UsercopyCostShare, WindowShorterThanOneIntervalCoversTheLastInterval) {
  UsercopyCostShare share(seconds(1));
  share.observe(0, counters({}, 0));
  share.observe(10, counters({{"a", 1}}, 100));
  share.observe(20, counters({{"a", 11}}, 200));
  auto e = share.estimate();
  ASSERT_TRUE(e);
  EXPECT_DOUBLE_EQ(e->window_seconds, 10);
  EXPECT_DOUBLE_EQ(e->share, 0.1);
}

TEST(UsercopyCostShare, CounterResetCountsFromZero) {
  UsercopyCostShare share(seconds(300));
  share.observe(0, counters({{"a", 50}}, 1000));
  share.observe(10, counters({{"a", 60}}, 1100));  // +10 of +100
  // Both counters restarted (e.g. the BPF maps were reloaded): 5 of 200 since the reset.
  share.observe(20, counters({{"a", 5}}, 200));
  auto e = share.estimate();
  ASSERT_TRUE(e);
  EXPECT_EQ(e->busy, 300u);
  EXPECT_DOUBLE_EQ(e->by_callsite.at("a"), 15.0 / 300);
  EXPECT_GT(e->share, 0) << "a reset must never make a share negative";
}

TEST(UsercopyCostShare, CallSiteAppearingLaterStartsAtZero) {
  UsercopyCostShare share(seconds(300));
  share.observe(0, counters({{"a", 7}}, 100));
  share.observe(10, counters({{"a", 7}, {"b", 3}}, 200));
  auto e = share.estimate();
  ASSERT_TRUE(e);
  EXPECT_DOUBLE_EQ(e->by_callsite.at("b"), 0.03);
  EXPECT_EQ(e->by_callsite.at("a"), 0);
}

TEST(UsercopyCostShare, HistoryIsBoundedAndWindowStartStaysClose) {
  // A window of 1000 drains: the history is thinned to kMaxHistory points, and the estimate
  // still starts within window / kMaxHistory of where it should.
  const double window = 1000;
  UsercopyCostShare share(std::chrono::duration<double>{window});
  uint64_t busy = 0, in = 0;
  for (int t = 0; t <= 5000; ++t) {
    share.observe(t, counters({{"a", in}}, busy));
    busy += 10;
    in += (t % 2);  // 5 % of busy time
  }
  auto e = share.estimate();
  ASSERT_TRUE(e);
  EXPECT_GE(e->window_seconds, window);
  EXPECT_LE(e->window_seconds, window + window / UsercopyCostShare::kMaxHistory + 1);
  EXPECT_NEAR(e->share, 0.05, 0.001);
  EXPECT_FALSE(std::isnan(e->share));
}

}  // namespace
}  // namespace hucprof
