#include "core/cost/speedup_prediction.h"

#include <gtest/gtest.h>

#include <chrono>
#include <map>
#include <set>
#include <string>

#include "core/cost/share_interval.h"

namespace hucprof {
namespace {

using std::chrono::seconds;

struct Counters {
  std::map<std::pair<std::string, std::string>, uint64_t> cpu_samples;  // (callsite, check)
  uint64_t kernel = 0, user = 0, idle = 0;
  std::map<std::string, uint64_t> latency_sum_ns;  // by callsite
  uint64_t busy_cpu_ns = 0;
};

// The aggregator's totals for these counters: every call site named (exported), unless
// `unexported` says it left the top-K.
CostTotals totals_of(const Counters& c, const std::set<std::string>& unexported = {}) {
  CostTotals t;
  for (const auto& [key, n] : c.cpu_samples) t.check_samples.by_callsite[key.first] += n;
  for (const auto& [callsite, ns] : c.latency_sum_ns) t.check_ns.by_callsite[callsite] = ns;
  for (CallsiteTotals* totals : {&t.check_samples, &t.check_ns}) {
    for (const auto& [callsite, n] : totals->by_callsite) {
      if (!unexported.contains(callsite)) totals->exported.insert(callsite);
    }
  }
  t.busy_samples = c.kernel + c.user;
  return t;
}

// One drain's prediction at `at`: the snapshot it writes into.
v1::Snapshot predict(SpeedupPrediction& prediction, double at, const Counters& c,
                     const std::set<std::string>& unexported = {}) {
  v1::Snapshot s;
  prediction.update(at, totals_of(c, unexported), c.busy_cpu_ns, s);
  return s;
}

const v1::CostSharePrediction* find(const v1::Snapshot& s, const std::string& estimator) {
  for (const auto& p : s.predictions()) {
    if (p.estimator() == estimator) return &p;
  }
  return nullptr;
}

std::map<std::string, double> by_callsite(const v1::CostSharePrediction& p) {
  std::map<std::string, double> out;
  for (const auto& c : p.callsites()) out[c.callsite()] = c.share();
  return out;
}

TEST(SpeedupPrediction, SamplingSharesOfKernelPlusUserSamples) {
  SpeedupPrediction prediction(seconds(300), /*sampling=*/true, /*latency=*/false);
  v1::Snapshot first = predict(prediction, 0, {{}, 10, 10, 100, {}, 0});
  EXPECT_EQ(first.predictions_size(), 0) << "one drain is not a window yet";

  // +700 kernel, +300 user, +9000 idle; in the checks: udp_recvmsg 30 (two check kinds, one
  // call site), other 10. Idle samples must not count: 40 of 1000, not 40 of 10000.
  v1::Snapshot second = predict(
      prediction, 10,
      {{{{"udp_recvmsg", "object"}, 20}, {{"udp_recvmsg", "slab"}, 10}, {{"other", "page"}, 10}},
       710,
       310,
       9100,
       {},
       0});
  const auto* p = find(second, "sampling");
  ASSERT_NE(p, nullptr);
  EXPECT_EQ(find(second, "latency"), nullptr) << "latency is off";
  EXPECT_DOUBLE_EQ(p->window_seconds(), 10);
  EXPECT_DOUBLE_EQ(p->share(), 0.04);
  ASSERT_TRUE(p->has_speedup());
  EXPECT_DOUBLE_EQ(p->speedup(), 1 / 0.96);
  EXPECT_EQ(by_callsite(*p),
            (std::map<std::string, double>{{"other", 0.01}, {"udp_recvmsg", 0.03}}));
}

TEST(SpeedupPrediction, StartedAtZeroTheFirstDrainIsInTheWindow) {
  // The daemon's counters start at zero with the sampler: its first drain is part of the window,
  // as it is part of the profile since start, so both give the same share.
  SpeedupPrediction prediction(seconds(300), true, false);
  prediction.start(100);
  v1::Snapshot first =
      predict(prediction, 110, {{{{"udp_recvmsg", "page"}, 12}}, 300, 100, 500, {}, 0});
  const auto* p = find(first, "sampling");
  ASSERT_NE(p, nullptr);
  EXPECT_DOUBLE_EQ(p->window_seconds(), 10);
  EXPECT_DOUBLE_EQ(p->share(), 12.0 / 400);
}

TEST(SpeedupPrediction, LatencyIsCheckTimeOverBusyCpuTime) {
  SpeedupPrediction prediction(seconds(300), /*sampling=*/false, /*latency=*/true);
  v1::Snapshot first =
      predict(prediction, 0, {{}, 0, 0, 0, {{"udp_recvmsg", 1'000}}, 5'000'000'000});
  // 2 s of busy CPU, 50 ms of it in udp_recvmsg's checks and 30 ms in udp_sendmsg's.
  v1::Snapshot second = predict(
      prediction, 10,
      {{}, 0, 0, 0, {{"udp_recvmsg", 50'001'000}, {"udp_sendmsg", 30'000'000}}, 7'000'000'000});
  const auto* p = find(second, "latency");
  ASSERT_NE(p, nullptr);
  EXPECT_EQ(find(second, "sampling"), nullptr);
  EXPECT_DOUBLE_EQ(p->share(), 0.04);
  EXPECT_DOUBLE_EQ(by_callsite(*p).at("udp_sendmsg"), 0.015);
  EXPECT_DOUBLE_EQ(p->speedup(), 1 / 0.96);
}

TEST(SpeedupPrediction, IdleOnlyWindowExportsNothing) {
  SpeedupPrediction prediction(seconds(30), true, true);
  Counters c{{{{"udp_recvmsg", "object"}, 5}}, 100, 100, 100, {{"udp_recvmsg", 10}}, 1'000};
  v1::Snapshot s = predict(prediction, 0, c);
  c.idle += 3000;  // a quiet node: only the idle counter moves
  s = predict(prediction, 10, c);
  EXPECT_EQ(s.predictions_size(), 0);
}

TEST(SpeedupPrediction, LatencyWaitsForABusyCpuReading) {
  SpeedupPrediction prediction(seconds(30), false, true);
  // /proc/stat unreadable: no busy CPU time.
  v1::Snapshot s = predict(prediction, 0, {{}, 0, 0, 0, {{"a", 10}}, 0});
  s = predict(prediction, 10, {{}, 0, 0, 0, {{"a", 20}}, 0});
  EXPECT_EQ(s.predictions_size(), 0);
}

TEST(SpeedupPrediction, MoreCheckTimeThanBusyTimeHasNoSpeedup) {
  // The latency estimator can overshoot (probe time counted inside the check, coarse /proc/stat
  // ticks): the share is exported as measured, the speed-up left unset rather than negative.
  SpeedupPrediction prediction(seconds(30), false, true);
  v1::Snapshot s = predict(prediction, 0, {{}, 0, 0, 0, {{"a", 0}}, 1'000'000});
  s = predict(prediction, 10, {{}, 0, 0, 0, {{"a", 30'000'000}}, 21'000'000});
  const auto* p = find(s, "latency");
  ASSERT_NE(p, nullptr);
  EXPECT_DOUBLE_EQ(p->share(), 1.5);
  EXPECT_FALSE(p->has_speedup());
}

TEST(SpeedupPrediction, EachUpdateReplacesThePredictions) {
  SpeedupPrediction prediction(seconds(30), true, false);
  v1::Snapshot s = predict(prediction, 0, {{}, 0, 0, 0, {}, 0});
  const Counters c{{{{"a", "object"}, 1}}, 100, 0, 0, {}, 0};
  s = predict(prediction, 10, c);
  prediction.update(10.5, totals_of(c), 0, s);  // again into it: no second entry
  EXPECT_EQ(s.predictions_size(), 1);
}

// The "0.00 % of 2 busy samples": a window this young is collecting, not a verdict;
// its interval says how little is known and how long it will take at this rate.
TEST(SpeedupPrediction, AFewSamplesAreCollectingNotAVerdict) {
  SpeedupPrediction prediction(seconds(300), true, false);
  prediction.start(0);
  v1::Snapshot s = predict(prediction, 1, {{{{"udp_recvmsg", "entry"}, 3}}, 150, 50, 0, {}, 0});
  const auto* p = find(s, "sampling");
  ASSERT_NE(p, nullptr);
  EXPECT_FALSE(p->decided());
  EXPECT_DOUBLE_EQ(p->in_checks(), 3);
  EXPECT_DOUBLE_EQ(p->busy(), 200);
  EXPECT_LT(p->lower(), 0.015);
  EXPECT_GT(p->upper(), 0.015);
  ASSERT_TRUE(p->has_needed_window_seconds());
  EXPECT_GT(p->needed_window_seconds(), 1);
  ASSERT_EQ(p->callsites_size(), 1);
  EXPECT_FALSE(p->callsites(0).decided());

  // A minute later at the same rates: enough to decide on.
  s = predict(prediction, 61, {{{{"udp_recvmsg", "entry"}, 183}}, 9150, 3050, 0, {}, 0});
  p = find(s, "sampling");
  ASSERT_NE(p, nullptr);
  EXPECT_TRUE(p->decided());
  EXPECT_FALSE(p->has_needed_window_seconds());
  EXPECT_LE(p->lower(), p->share());
  EXPECT_GE(p->upper(), p->share());
  EXPECT_DOUBLE_EQ(p->design_effect(), kMinDesignEffect)
      << "two points say nothing of their spread: the least design effect";
}

// One sample among thousands is known to be under 0.2 %, but while the whole is collecting no
// part of it is stated as an answer.
TEST(SpeedupPrediction, NoCallSiteIsDecidedBeforeTheWhole) {
  SpeedupPrediction prediction(seconds(300), true, false);
  prediction.start(0);
  v1::Snapshot s = predict(
      prediction, 17,
      {{{{"udp_recvmsg", "entry"}, 28}, {{"__sys_sendto", "entry"}, 1}}, 3000, 356, 0, {}, 0});
  const auto* p = find(s, "sampling");
  ASSERT_NE(p, nullptr);
  EXPECT_FALSE(p->decided());
  for (const auto& site : p->callsites()) {
    EXPECT_FALSE(site.decided()) << site.callsite();
    if (site.callsite() == "__sys_sendto") {
      EXPECT_LT(site.upper(), 0.005) << "known to be small";
    }
  }
}

// --top-k: a call site the snapshot no longer names is "other" in the prediction too (what it
// counted in the window with it), and one that comes back with the value it kept is no increase.
TEST(SpeedupPrediction, CallSitesFollowTheSnapshotsTopK) {
  SpeedupPrediction prediction(seconds(300), true, false);
  prediction.start(0);
  v1::Snapshot s =
      predict(prediction, 10, {{{{"a", "entry"}, 10}, {{"b", "entry"}, 10}}, 1000, 0, 0, {}, 0});
  s = predict(
      prediction, 20,
      {{{{"a", "entry"}, 20}, {{"b", "entry"}, 10}, {{"other", "entry"}, 5}}, 2000, 0, 0, {}, 0},
      {"b"});
  EXPECT_EQ(by_callsite(*find(s, "sampling")),
            (std::map<std::string, double>{{"a", 0.01}, {"other", 0.0075}}))
      << "b left: its 10 in the window are other's";
  s = predict(
      prediction, 30,
      {{{{"a", "entry"}, 20}, {{"b", "entry"}, 12}, {{"other", "entry"}, 5}}, 3000, 0, 0, {}, 0},
      {"a"});
  EXPECT_EQ(by_callsite(*find(s, "sampling")),
            (std::map<std::string, double>{{"b", 12.0 / 3000}, {"other", 25.0 / 3000}}))
      << "b is back at 10 + 2: it grew by 2, and a (20, not named now) is other's";
}

// The latency estimator times every check: nothing to collect, and its interval is the
// histogram's resolution (each check between its log2 bucket's bounds).
TEST(SpeedupPrediction, LatencyStatesItsBucketError) {
  SpeedupPrediction prediction(seconds(300), false, true);
  v1::Snapshot s = predict(prediction, 0, {{}, 0, 0, 0, {{"a", 0}}, 1'000'000'000});
  s = predict(prediction, 10, {{}, 0, 0, 0, {{"a", 30'000'000}}, 2'000'000'000});
  const auto* p = find(s, "latency");
  ASSERT_NE(p, nullptr);
  EXPECT_TRUE(p->decided());
  EXPECT_DOUBLE_EQ(p->lower(), 0.02);
  EXPECT_DOUBLE_EQ(p->upper(), 0.04);
}

}  // namespace
}  // namespace hucprof
