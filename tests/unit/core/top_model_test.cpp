// `hucprof top`'s model: cumulative readings in, ranked rows with their intervals out.
#include "core/profile/top_model.h"

#include <gtest/gtest.h>

#include <cmath>
#include <string>

namespace hucprof {
namespace {

// A reading of sampled counters: busy (kernel, user), idle, and samples per call site.
struct Sampled {
  uint64_t kernel = 0, user = 0, idle = 0;
  std::vector<std::tuple<std::string, std::string, std::string, uint64_t>> sites;
};

hucprof::v1::Snapshot sampled(const Sampled& s, uint64_t hz = 99) {
  hucprof::v1::Snapshot out;
  out.set_sample_frequency_hz(hz);
  for (const auto& [context, n] :
       {std::pair{"kernel", s.kernel}, std::pair{"user", s.user}, std::pair{"idle", s.idle}}) {
    auto* c = out.add_sampled();
    c->set_context(context);
    c->set_samples(n);
  }
  for (const auto& [callsite, syscall, step, n] : s.sites) {
    auto* c = out.add_cpu_samples();
    c->set_callsite(callsite);
    c->set_syscall(syscall);
    c->set_step(step);
    c->set_samples(n);
  }
  out.set_hardened_usercopy_enabled(true);
  return out;
}

hucprof::v1::Snapshot probed(
    std::vector<std::tuple<std::string, std::string, std::string, uint64_t, uint64_t>> checks) {
  hucprof::v1::Snapshot out;
  auto* probe = out.add_probes();
  probe->set_target("__check_object_size");
  probe->set_mode("fentry");
  probe->set_attached(true);
  for (const auto& [callsite, syscall, direction, calls, bytes] : checks) {
    auto* c = out.add_checks();
    c->set_callsite(callsite);
    c->set_syscall(syscall);
    c->set_direction(direction);
    c->set_calls(calls);
    c->set_bytes(bytes);
  }
  return out;
}

hucprof::v1::Snapshot drained(uint64_t drains, const Sampled& s) {
  hucprof::v1::Snapshot out = sampled(s);
  out.set_intervals(drains);
  return out;
}

// A daemon drains every --interval (10 s by default) while top reads every second: the readings
// between its drains are no intervals (no "0 busy samples in the last 1 s", and no 10 s of counts
// said to be 1 s's), and the counts up to the first drain top sees began at an unknown time.
TEST(TopModel, ADaemonsIntervalsRunFromDrainToDrain) {
  TopModel model(false);
  EXPECT_EQ(model.observe(0, drained(4, {400, 400, 0, {}})), TopModel::Observed::First);
  EXPECT_EQ(model.observe(1, drained(4, {400, 400, 0, {}})), TopModel::Observed::Unchanged);
  // The first new drain: counting starts here, whatever it brought since the reading before.
  EXPECT_EQ(model.observe(2, drained(5, {900, 900, 0, {}})), TopModel::Observed::First);
  EXPECT_FALSE(model.view(false));
  for (double at = 3; at < 12; ++at) {
    EXPECT_EQ(model.observe(at, drained(5, {900, 900, 0, {}})), TopModel::Observed::Unchanged);
  }
  EXPECT_EQ(model.observe(12, drained(6, {1400, 1400, 0, {{"a", "read", "entry", 30}}})),
            TopModel::Observed::Counted);
  const auto view = model.view(false);
  ASSERT_TRUE(view);
  EXPECT_EQ(view->seconds, 10);
  EXPECT_EQ(view->kernel + view->user, 1000u);
  ASSERT_EQ(view->rows.size(), 1u);
  EXPECT_EQ(view->rows[0].samples, 30u);
  // Between drains the last interval stands.
  EXPECT_EQ(model.observe(13, drained(6, {1400, 1400, 0, {{"a", "read", "entry", 30}}})),
            TopModel::Observed::Unchanged);
  EXPECT_EQ(model.view(false)->seconds, 10);
}

// top's own programs are drained at every reading: the first reading starts an interval.
TEST(TopModel, OwnDrainsCountFromTheFirstReading) {
  TopModel model;
  EXPECT_EQ(model.observe(0, drained(1, {100, 100, 0, {}})), TopModel::Observed::First);
  EXPECT_EQ(model.observe(1, drained(2, {200, 200, 0, {}})), TopModel::Observed::Counted);
  EXPECT_EQ(model.view(false)->kernel, 100u);
}

TEST(TopModel, WaitsForTheSecondReading) {
  TopModel model;
  EXPECT_EQ(model.observe(0, sampled({100, 100, 0, {{"udp_recvmsg", "recvfrom", "entry", 5}}})),
            TopModel::Observed::First);
  EXPECT_FALSE(model.view(false));
  EXPECT_FALSE(model.view(true));
}

// The interval is the difference of two readings: what either held before is in neither.
TEST(TopModel, AnIntervalIsTheDifferenceOfTwoReadings) {
  TopModel model;
  model.observe(10, sampled({1000,
                             3000,
                             500,
                             {{"udp_recvmsg", "recvfrom", "entry", 40},
                              {"udp_sendmsg", "sendto", "virt_addr_valid", 7}}}));
  EXPECT_EQ(model.observe(11.5, sampled({1600,
                                         3400,
                                         900,
                                         {{"udp_recvmsg", "recvfrom", "entry", 70},
                                          {"udp_recvmsg", "recvfrom", "slab_object", 10},
                                          {"udp_sendmsg", "sendto", "virt_addr_valid", 27}}})),
            TopModel::Observed::Counted);
  const auto view = model.view(false);
  ASSERT_TRUE(view);
  EXPECT_DOUBLE_EQ(view->seconds, 1.5);
  EXPECT_EQ(view->kernel, 600u);
  EXPECT_EQ(view->user, 400u);
  EXPECT_EQ(view->idle, 400u);
  EXPECT_EQ(view->total.k, 60);  // 30 + 10 + 20
  EXPECT_EQ(view->total.n, 1000);
  ASSERT_EQ(view->rows.size(), 2u);
  EXPECT_EQ(view->rows[0].callsite, "udp_recvmsg");
  EXPECT_EQ(view->rows[0].samples, 40u);
  EXPECT_DOUBLE_EQ(view->rows[0].share.share, 0.04);
  ASSERT_EQ(view->rows[0].steps.size(), 2u);
  EXPECT_EQ(view->rows[0].steps[0], (std::pair<std::string, uint64_t>{"entry", 30}));
  EXPECT_EQ(view->rows[0].steps[1], (std::pair<std::string, uint64_t>{"slab_object", 10}));
  EXPECT_EQ(view->rows[1].callsite, "udp_sendmsg");
  EXPECT_EQ(view->rows[1].samples, 20u);
}

// Every share carries the interval share_interval gives it for its counts: Wilson's of the
// effective counts at the least design effect for one interval (a single batch says nothing of
// its spread).
TEST(TopModel, SharesCarryTheirIntervalFromShareInterval) {
  TopModel model;
  model.observe(0, sampled({0, 0, 0, {}}));
  model.observe(
      1, sampled({5000, 5000, 0, {{"a", "read", "entry", 300}, {"b", "write", "entry", 30}}}));
  const auto view = model.view(false);
  ASSERT_TRUE(view);
  const ShareEstimate total = estimate_share(330, 10000, 1, kMinDesignEffect);
  EXPECT_EQ(view->total.interval.lower, total.interval.lower);
  EXPECT_EQ(view->total.interval.upper, total.interval.upper);
  EXPECT_TRUE(view->total.decided);
  const ShareInterval a = wilson_interval(300 / kMinDesignEffect, 10000 / kMinDesignEffect);
  EXPECT_EQ(view->rows[0].share.interval.lower, a.lower);
  EXPECT_EQ(view->rows[0].share.interval.upper, a.upper);
  EXPECT_TRUE(view->rows[0].answered);
  // 30 samples of 10 000: its interval is wider than half of it and than 0.2 percentage points:
  // collecting. (3 would be answered: a share near 0 known to be near 0.)
  EXPECT_FALSE(view->rows[1].share.decided);
  EXPECT_FALSE(view->rows[1].answered);
}

// No part is answered before the whole: a row narrow enough on its own is still collecting
// while the total is.
TEST(TopModel, NoRowIsAnsweredWhileTheTotalCollects) {
  TopModel model;
  model.observe(0, sampled({0, 0, 0, {}}));
  model.observe(1, sampled({100, 100, 0, {{"a", "read", "entry", 10}}}));
  const auto view = model.view(false);
  ASSERT_TRUE(view);
  EXPECT_FALSE(view->total.decided);
  ASSERT_TRUE(view->total.needed_span);
  EXPECT_GT(*view->total.needed_span, 1);
  EXPECT_FALSE(view->rows[0].answered);
}

// A counter below its last value: the daemon restarted. Nothing of that reading is an interval
// (the span since it started is unknown); the next one is counted from it.
TEST(TopModel, ACounterThatWentBackRestartsTheCount) {
  TopModel model;
  model.observe(0, sampled({1000, 1000, 0, {{"a", "read", "entry", 50}}}));
  model.observe(1, sampled({2000, 2000, 0, {{"a", "read", "entry", 90}}}));
  ASSERT_TRUE(model.view(true));
  EXPECT_EQ(model.observe(2, sampled({300, 300, 0, {{"a", "read", "entry", 4}}})),
            TopModel::Observed::WentBack);
  EXPECT_FALSE(model.view(false));
  EXPECT_FALSE(model.view(true));
  EXPECT_EQ(model.observe(3, sampled({800, 700, 0, {{"a", "read", "entry", 24}}})),
            TopModel::Observed::Counted);
  const auto since_start = model.view(true);
  ASSERT_TRUE(since_start);
  EXPECT_EQ(since_start->total.k, 20);
  EXPECT_EQ(since_start->total.n, 900);
  EXPECT_DOUBLE_EQ(since_start->seconds, 1);
}

// One series going down is enough: the probe counters too.
TEST(TopModel, AProbeCounterThatWentBackRestartsTheCount) {
  TopModel model;
  model.observe(0, probed({{"a", "read", "to_user", 100, 1000}}));
  EXPECT_EQ(model.observe(1, probed({{"a", "read", "to_user", 100, 999}})),
            TopModel::Observed::WentBack);
}

// A call site out of the daemon's top-K is not exported: absent is no reset, and it resumes
// from its value (what it did meanwhile went to "other").
TEST(TopModel, AnAbsentSeriesKeepsItsValue) {
  TopModel model;
  model.observe(0,
                sampled({100, 100, 0, {{"a", "read", "entry", 10}, {"b", "write", "entry", 5}}}));
  EXPECT_EQ(model.observe(
                1, sampled({200, 200, 0, {{"a", "read", "entry", 20}, {"other", "", "entry", 3}}})),
            TopModel::Observed::Counted);
  EXPECT_EQ(model.observe(2, sampled({300,
                                      300,
                                      0,
                                      {{"a", "read", "entry", 25},
                                       {"b", "write", "entry", 6},
                                       {"other", "", "entry", 3}}})),
            TopModel::Observed::Counted);
  const auto view = model.view(false);
  ASSERT_TRUE(view);
  ASSERT_EQ(view->rows.size(), 2u);
  EXPECT_EQ(view->rows[0].callsite, "a");
  EXPECT_EQ(view->rows[0].samples, 5u);
  EXPECT_EQ(view->rows[1].callsite, "b");
  EXPECT_EQ(view->rows[1].samples, 1u);
}

// Ties are ranked by name, so a refresh does not reorder equal rows; a row that counted
// nothing in the span is not shown.
TEST(TopModel, TiesRankByNameAndIdleRowsAreLeftOut) {
  TopModel model;
  model.observe(0, sampled({0, 0, 0, {{"zeta", "read", "entry", 1}}}));
  model.observe(1, sampled({500,
                            500,
                            0,
                            {{"zeta", "read", "entry", 1},
                             {"beta", "write", "entry", 7},
                             {"alpha", "write", "entry", 7},
                             {"alpha", "read", "entry", 7},
                             {"gamma", "read", "entry", 9}}}));
  const auto view = model.view(false);
  ASSERT_TRUE(view);
  std::vector<std::string> order;
  for (const TopRow& row : view->rows) order.push_back(row.callsite + "/" + row.syscall);
  EXPECT_EQ(order,
            (std::vector<std::string>{"gamma/read", "alpha/read", "alpha/write", "beta/write"}));
}

// Since start adds the intervals up; the interval view is the last one alone.
TEST(TopModel, SinceStartAddsTheIntervalsUp) {
  TopModel model;
  model.observe(0, sampled({0, 0, 0, {}}));
  model.observe(1, sampled({100, 100, 0, {{"a", "read", "entry", 10}}}));
  model.observe(2, sampled({200, 200, 0, {{"a", "read", "entry", 10}, {"b", "read", "entry", 4}}}));
  const auto interval = model.view(false);
  const auto since_start = model.view(true);
  ASSERT_TRUE(interval && since_start);
  EXPECT_FALSE(interval->cumulative);
  EXPECT_TRUE(since_start->cumulative);
  EXPECT_EQ(interval->total.k, 4);
  EXPECT_EQ(interval->total.n, 200);
  ASSERT_EQ(interval->rows.size(), 1u);
  EXPECT_EQ(interval->rows[0].callsite, "b");
  EXPECT_EQ(since_start->total.k, 14);
  EXPECT_EQ(since_start->total.n, 400);
  EXPECT_DOUBLE_EQ(since_start->seconds, 2);
  ASSERT_EQ(since_start->rows.size(), 2u);
  EXPECT_EQ(since_start->rows[0].callsite, "a");
}

// Since start, the intervals are the batches whose spread is the design effect, as the
// daemon's window of drains: counts that swing far more than binomial ones widen the interval.
TEST(TopModel, SinceStartTakesTheIntervalsSpreadAsTheDesignEffect) {
  TopModel model;
  uint64_t k = 0, n = 0;
  model.observe(0, sampled({0, 0, 0, {}}));
  std::vector<Batch> batches;
  for (int i = 1; i <= 12; ++i) {
    const uint64_t in_checks = i % 2 == 0 ? 60 : 0;  // all or nothing: far from binomial
    k += in_checks;
    n += 1000;
    batches.push_back({static_cast<double>(in_checks), 1000});
    model.observe(i, sampled({n, 0, 0, {{"a", "read", "entry", k}}}));
  }
  const auto view = model.view(true);
  ASSERT_TRUE(view);
  const double d = design_effect(batches);
  EXPECT_GT(d, 10);
  EXPECT_DOUBLE_EQ(view->total.design_effect, d);
  EXPECT_DOUBLE_EQ(view->rows[0].share.design_effect, d);
  const ShareInterval expected = wilson_interval(static_cast<double>(k) / d, n / d);
  EXPECT_EQ(view->total.interval.lower, expected.lower);
  EXPECT_EQ(view->total.interval.upper, expected.upper);
}

// A long session keeps a bounded history: batches merge in pairs, the counts stay whole.
TEST(TopModel, ALongSessionKeepsBoundedBatchesAndExactCounts) {
  TopModel model;
  model.observe(0, sampled({0, 0, 0, {}}));
  for (int i = 1; i <= 1000; ++i) {
    model.observe(i, sampled({1000ull * i, 0, 0, {{"a", "read", "entry", 3ull * i}}}));
  }
  const auto view = model.view(true);
  ASSERT_TRUE(view);
  EXPECT_EQ(view->total.k, 3000);
  EXPECT_EQ(view->total.n, 1'000'000);
  EXPECT_DOUBLE_EQ(view->seconds, 1000);
}

// Probe mode: exact checks and bytes, summed over the directions, ranked by checks.
TEST(TopModel, ProbeModeCountsChecksExactly) {
  TopModel model;
  model.observe(0, probed({{"udp_recvmsg", "recvfrom", "to_user", 10, 640}}));
  model.observe(1, probed({{"udp_recvmsg", "recvfrom", "to_user", 510, 32640},
                           {"netlink_recvmsg", "recvmsg", "to_user", 900, 900000},
                           {"netlink_recvmsg", "recvmsg", "from_user", 100, 100}}));
  const auto view = model.view(false);
  ASSERT_TRUE(view);
  EXPECT_TRUE(view->probes);
  EXPECT_FALSE(view->sampling);
  EXPECT_EQ(view->calls, 1500u);
  ASSERT_EQ(view->rows.size(), 2u);
  EXPECT_EQ(view->rows[0].callsite, "netlink_recvmsg");
  EXPECT_EQ(view->rows[0].calls, 1000u);
  EXPECT_EQ(view->rows[0].bytes, 900100u);
  EXPECT_EQ(view->rows[1].calls, 500u);
  EXPECT_EQ(view->rows[1].bytes, 32000u);
}

TEST(TopModel, NoBusyCpuIsNoShare) {
  TopModel model;
  model.observe(0, sampled({10, 10, 0, {}}));
  model.observe(1, sampled({10, 10, 500, {}}));
  const auto view = model.view(false);
  ASSERT_TRUE(view);
  EXPECT_EQ(view->total.n, 0);
  EXPECT_FALSE(view->total.decided);
  EXPECT_TRUE(view->rows.empty());
}

}  // namespace
}  // namespace hucprof
