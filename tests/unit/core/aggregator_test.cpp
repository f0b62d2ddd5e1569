#include "core/aggregator.h"

#include <gtest/gtest.h>

#include <map>
#include <random>
#include <set>
#include <string>
#include <tuple>

namespace hucprof {
namespace {

using CheckLabels = std::tuple<std::string, std::string, std::string>;  // callsite, syscall, dir

std::map<CheckLabels, uint64_t> calls_by_series(const v1::Snapshot& s) {
  std::map<CheckLabels, uint64_t> out;
  for (const auto& c : s.checks()) out[{c.callsite(), c.syscall(), c.direction()}] = c.calls();
  return out;
}

std::map<std::string, uint64_t> calls_by_callsite(const v1::Snapshot& s) {
  std::map<std::string, uint64_t> out;
  for (const auto& c : s.checks()) out[c.callsite()] += c.calls();
  return out;
}

std::map<std::string, uint64_t> samples_by_callsite(const v1::Snapshot& s) {
  std::map<std::string, uint64_t> out;
  for (const auto& c : s.cpu_samples()) out[c.callsite()] += c.samples();
  return out;
}

v1::Snapshot snapshot_of(const Aggregator& agg) {
  v1::Snapshot s;
  agg.fill(s);
  return s;
}

CheckDelta check(std::string callsite, uint64_t calls, std::string syscall = "recvfrom",
                 std::string direction = "to_user") {
  return {std::move(callsite), std::move(syscall), std::move(direction), calls, calls * 100};
}

TEST(Aggregator, TopKNamedRestInOther) {
  Aggregator agg(2);
  IntervalDeltas d;
  d.checks = {check("udp_recvmsg", 10), check("netlink_recvmsg", 5), check("pipe_read", 1, "read")};
  agg.apply(d);
  auto s = snapshot_of(agg);
  EXPECT_EQ(calls_by_series(s), (std::map<CheckLabels, uint64_t>{
                                    {{"netlink_recvmsg", "recvfrom", "to_user"}, 5},
                                    {{"other", "read", "to_user"}, 1},
                                    {{"udp_recvmsg", "recvfrom", "to_user"}, 10},
                                }));
  for (const auto& c : s.checks()) EXPECT_EQ(c.bytes(), c.calls() * 100) << c.callsite();
  EXPECT_EQ(s.intervals(), 1u);
}

TEST(Aggregator, OtherKeepsItsOtherLabels) {
  Aggregator agg(1);
  IntervalDeltas d;
  d.checks = {check("hot", 100), check("a", 1, "read"), check("b", 2, "read"),
              check("c", 4, "sendto", "from_user")};
  agg.apply(d);
  auto series = calls_by_series(snapshot_of(agg));
  EXPECT_EQ(series.at({"other", "read", "to_user"}), 3u);
  EXPECT_EQ(series.at({"other", "sendto", "from_user"}), 4u);
  EXPECT_EQ(series.size(), 3u);
}

// The worked example of the header comment, interval by interval.
TEST(Aggregator, SeriesStayMonotonicWhenRanksChange) {
  Aggregator agg(2);
  IntervalDeltas d1;
  d1.checks = {check("a", 10), check("b", 5), check("c", 1)};
  agg.apply(d1);
  EXPECT_EQ(calls_by_callsite(snapshot_of(agg)),
            (std::map<std::string, uint64_t>{{"a", 10}, {"b", 5}, {"other", 1}}));

  // c overtakes b: c is named from this interval on, starting from this interval's 100 (its
  // earlier 1 stays in other); b keeps its 5 and its new increment goes to other.
  IntervalDeltas d2;
  d2.checks = {check("a", 1), check("b", 1), check("c", 100)};
  agg.apply(d2);
  EXPECT_EQ(calls_by_callsite(snapshot_of(agg)),
            (std::map<std::string, uint64_t>{{"a", 11}, {"b", 5}, {"c", 100}, {"other", 2}}));

  // b comes back: it continues from its named 5, not from what other holds for it.
  IntervalDeltas d3;
  d3.checks = {check("b", 1000)};
  agg.apply(d3);
  EXPECT_EQ(calls_by_callsite(snapshot_of(agg)),
            (std::map<std::string, uint64_t>{{"a", 11}, {"b", 1005}, {"c", 100}, {"other", 2}}));
  EXPECT_EQ(snapshot_of(agg).intervals(), 3u);
}

// SIGHUP may change --top-k while running: from the next interval on the new K decides, and no
// series shrinks (a site leaving the top-K freezes, as when ranks change).
TEST(Aggregator, TopKChangesTakeEffectAtTheNextInterval) {
  Aggregator agg(1);
  IntervalDeltas d;
  d.checks = {check("a", 10), check("b", 5), check("c", 1)};
  agg.apply(d);
  EXPECT_EQ(calls_by_callsite(snapshot_of(agg)),
            (std::map<std::string, uint64_t>{{"a", 10}, {"other", 6}}));

  agg.set_top_k(3);
  agg.apply(d);  // b and c are named from now on; what other got for them stays there
  EXPECT_EQ(calls_by_callsite(snapshot_of(agg)),
            (std::map<std::string, uint64_t>{{"a", 20}, {"b", 5}, {"c", 1}, {"other", 6}}));

  agg.set_top_k(1);
  agg.apply(d);  // b and c freeze, their increments go to other again
  EXPECT_EQ(calls_by_callsite(snapshot_of(agg)),
            (std::map<std::string, uint64_t>{{"a", 30}, {"b", 5}, {"c", 1}, {"other", 12}}));
}

// Random workloads with shifting hot spots: no exported series ever shrinks or disappears, the
// sum over series is exactly the sum of the deltas, and only current top-K sites (or other) grow.
TEST(Aggregator, InvariantsUnderChurn) {
  constexpr size_t kTopK = 3;
  Aggregator agg(kTopK);
  std::mt19937 rng(1234);
  const std::vector<std::string> sites = {"s0", "s1", "s2", "s3", "s4", "s5", "s6", "s7"};
  const std::vector<std::string> syscalls = {"read", "recvfrom"};
  std::map<std::string, uint64_t> cumulative;
  uint64_t total_calls = 0, total_bytes = 0, total_samples = 0;
  std::map<CheckLabels, uint64_t> previous;
  std::map<std::string, uint64_t> previous_samples;

  for (int interval = 0; interval < 200; ++interval) {
    IntervalDeltas d;
    size_t hot = (interval / 20) % sites.size();  // the hot spot moves every 20 intervals
    for (size_t i = 0; i < sites.size(); ++i) {
      uint64_t calls = rng() % 10 + (i == hot ? 50 : 0);
      const std::string& sc = syscalls[rng() % syscalls.size()];
      d.checks.push_back({sites[i], sc, i % 2 ? "from_user" : "to_user", calls, calls * 3});
      d.samples.push_back({sites[i], sc, "object", rng() % 5});
      cumulative[sites[i]] += calls;
      total_calls += calls;
      total_bytes += calls * 3;
      total_samples += d.samples.back().samples;
    }
    agg.apply(d);
    auto s = snapshot_of(agg);

    uint64_t sum_calls = 0, sum_bytes = 0, sum_samples = 0;
    for (const auto& c : s.checks()) {
      sum_calls += c.calls();
      sum_bytes += c.bytes();
    }
    for (const auto& c : s.cpu_samples()) sum_samples += c.samples();
    ASSERT_EQ(sum_calls, total_calls) << "interval " << interval;
    ASSERT_EQ(sum_bytes, total_bytes) << "interval " << interval;
    ASSERT_EQ(sum_samples, total_samples) << "interval " << interval;

    // The current top-K by cumulative calls (ties: first name).
    std::vector<std::pair<uint64_t, std::string>> ranked;
    for (const auto& [site, n] : cumulative) ranked.push_back({n, site});
    std::sort(ranked.begin(), ranked.end(), [](const auto& a, const auto& b) {
      return a.first != b.first ? a.first > b.first : a.second < b.second;
    });
    std::set<std::string> top;
    for (size_t i = 0; i < kTopK; ++i) top.insert(ranked[i].second);

    auto current = calls_by_series(s);
    for (const auto& [labels, value] : previous) {
      auto it = current.find(labels);
      ASSERT_NE(it, current.end()) << std::get<0>(labels) << " disappeared";
      ASSERT_GE(it->second, value) << std::get<0>(labels) << " went down";
      if (it->second > value && std::get<0>(labels) != "other") {
        ASSERT_TRUE(top.contains(std::get<0>(labels)))
            << std::get<0>(labels) << " grew outside the top-K";
      }
    }
    std::set<std::string> named;
    for (const auto& [labels, value] : current) {
      if (std::get<0>(labels) != "other") named.insert(std::get<0>(labels));
    }
    for (const auto& site : top) ASSERT_TRUE(named.contains(site)) << site << " not exported";
    for (const auto& [site, n] : samples_by_callsite(s)) {
      ASSERT_GE(n, previous_samples[site]) << site;
    }
    previous = current;
    previous_samples = samples_by_callsite(s);
  }
  // The hot spot moved through every site, so churn really happened.
  EXPECT_GT(previous.size(), kTopK + 2);
}

TEST(Aggregator, CpuSamplesAreRankedBySamplesNotCalls) {
  Aggregator agg(1);
  IntervalDeltas d;
  d.checks = {check("many_calls", 1000), check("slow_calls", 1)};
  d.samples = {{"many_calls", "recvfrom", "object", 2}, {"slow_calls", "recvmsg", "vmalloc", 50}};
  agg.apply(d);
  auto s = snapshot_of(agg);
  EXPECT_EQ(calls_by_callsite(s),
            (std::map<std::string, uint64_t>{{"many_calls", 1000}, {"other", 1}}));
  ASSERT_EQ(s.cpu_samples_size(), 2);
  // Sorted: "other" < "slow_calls".
  EXPECT_EQ(s.cpu_samples(0).callsite(), "other");
  EXPECT_EQ(s.cpu_samples(0).syscall(), "recvfrom");
  EXPECT_EQ(s.cpu_samples(0).check(), "object");
  EXPECT_EQ(s.cpu_samples(0).samples(), 2u);
  EXPECT_EQ(s.cpu_samples(1).callsite(), "slow_calls");
  EXPECT_EQ(s.cpu_samples(1).check(), "vmalloc");
  EXPECT_EQ(s.cpu_samples(1).samples(), 50u);
}

TEST(Aggregator, SubchecksFollowTheCallsRanking) {
  Aggregator agg(1);
  IntervalDeltas d;
  d.checks = {check("top", 10), check("low", 1)};
  d.subchecks = {
      {"top", "slab", 7}, {"low", "vmalloc", 1}, {"low", "slab", 1}, {"also_low", "slab", 2}};
  agg.apply(d);
  auto s = snapshot_of(agg);
  std::map<std::pair<std::string, std::string>, uint64_t> got;
  for (const auto& c : s.subchecks()) got[{c.callsite(), c.check()}] = c.count();
  EXPECT_EQ(got, (std::map<std::pair<std::string, std::string>, uint64_t>{
                     {{"other", "slab"}, 3}, {{"other", "vmalloc"}, 1}, {{"top", "slab"}, 7}}));
}

TEST(Aggregator, LatencyFollowsTheCallsRankingAndSumsBuckets) {
  Aggregator agg(1);
  IntervalDeltas d;
  d.checks = {check("top", 10), check("low", 1)};
  d.latency = {{"top", {0, 2, 1}}, {"low", {1, 0}}, {"lower", {0, 0, 0, 4}}};
  agg.apply(d);
  agg.apply(d);
  auto s = snapshot_of(agg);
  ASSERT_EQ(s.latency_size(), 2);
  const auto& other = s.latency(0);
  EXPECT_EQ(other.callsite(), "other");
  EXPECT_EQ(std::vector<uint64_t>(other.bucket_counts().begin(), other.bucket_counts().end()),
            (std::vector<uint64_t>{2, 0, 0, 8}));
  // Midpoints: bucket 0 → 1 ns, bucket 3 → 12 ns.
  EXPECT_EQ(other.sum_ns(), 2 * 1 + 8 * 12u);
  const auto& top = s.latency(1);
  EXPECT_EQ(top.callsite(), "top");
  EXPECT_EQ(std::vector<uint64_t>(top.bucket_counts().begin(), top.bucket_counts().end()),
            (std::vector<uint64_t>{0, 4, 2}));
  EXPECT_EQ(top.sum_ns(), 4 * 3 + 2 * 6u);
}

TEST(Aggregator, DropsAndContextsAreCumulativeAndKeepZeros) {
  Aggregator agg(5);
  IntervalDeltas d1;
  d1.drops = {{"map_full", 0}, {"stack_collision", 3}};
  d1.sampled_by_context = {{"kernel", 10}, {"user", 0}};
  agg.apply(d1);
  IntervalDeltas d2;
  d2.drops = {{"stack_collision", 2}};
  d2.sampled_by_context = {{"kernel", 5}, {"idle", 1}};
  agg.apply(d2);
  auto s = snapshot_of(agg);
  std::map<std::string, uint64_t> drops, contexts;
  for (const auto& x : s.drops()) drops[x.reason()] = x.count();
  for (const auto& x : s.sampled()) contexts[x.context()] = x.samples();
  EXPECT_EQ(drops, (std::map<std::string, uint64_t>{{"map_full", 0}, {"stack_collision", 5}}));
  EXPECT_EQ(contexts, (std::map<std::string, uint64_t>{{"idle", 1}, {"kernel", 15}, {"user", 0}}));
  EXPECT_EQ(s.intervals(), 2u);
}

TEST(Aggregator, HelperWalksAreCumulative) {
  Aggregator agg(5);
  IntervalDeltas d1;
  d1.helper_walks = {{"learned_offsets", 7}, {"stack_walk", 2}, {"offset_mismatch", 0}};
  agg.apply(d1);
  IntervalDeltas d2;
  d2.helper_walks = {{"learned_offsets", 5}};
  agg.apply(d2);
  const auto s = snapshot_of(agg);
  std::map<std::string, uint64_t> walks;
  for (const auto& x : s.helper_walks()) walks[x.walk()] = x.count();
  EXPECT_EQ(walks, (std::map<std::string, uint64_t>{
                       {"learned_offsets", 12}, {"offset_mismatch", 0}, {"stack_walk", 2}}));
}

TEST(Aggregator, EmptyIntervalsOnlyCount) {
  Aggregator agg(3);
  agg.apply({});
  agg.apply({});
  auto s = snapshot_of(agg);
  EXPECT_EQ(s.intervals(), 2u);
  EXPECT_EQ(s.checks_size(), 0);
  EXPECT_EQ(s.cpu_samples_size(), 0);
  EXPECT_EQ(s.drops_size(), 0);
}

TEST(Aggregator, FillIsSortedDeterministicAndReplacesCounters) {
  Aggregator agg(10);
  IntervalDeltas d;
  d.checks = {check("zeta", 1), check("alpha", 2, "sendto", "from_user"), check("alpha", 3),
              check("mid", 4)};
  agg.apply(d);
  v1::Snapshot s;
  s.set_hardened_usercopy_enabled(true);  // status fields belong to the caller
  s.add_checks()->set_callsite("stale");
  agg.fill(s);
  std::vector<CheckLabels> order;
  for (const auto& c : s.checks()) order.push_back({c.callsite(), c.syscall(), c.direction()});
  EXPECT_EQ(order, (std::vector<CheckLabels>{{"alpha", "recvfrom", "to_user"},
                                             {"alpha", "sendto", "from_user"},
                                             {"mid", "recvfrom", "to_user"},
                                             {"zeta", "recvfrom", "to_user"}}));
  EXPECT_TRUE(s.hardened_usercopy_enabled());

  v1::Snapshot again;
  agg.fill(again);
  again.set_hardened_usercopy_enabled(true);
  EXPECT_EQ(s.SerializeAsString(), again.SerializeAsString());
}

TEST(Aggregator, InputNamedOtherIsNeverRanked) {
  Aggregator agg(1);
  IntervalDeltas d;
  d.checks = {check("other", 1000), check("a", 1)};
  agg.apply(d);
  EXPECT_EQ(calls_by_callsite(snapshot_of(agg)),
            (std::map<std::string, uint64_t>{{"a", 1}, {"other", 1000}}));
}

TEST(Aggregator, ZeroIncrementsCreateNoSeries) {
  Aggregator agg(3);
  IntervalDeltas d;
  d.checks = {check("idle_site", 0)};
  d.subchecks = {{"idle_site", "slab", 0}};
  d.samples = {{"idle_site", "read", "object", 0}};
  d.latency = {{"idle_site", {0, 0}}};
  agg.apply(d);
  auto s = snapshot_of(agg);
  EXPECT_EQ(s.checks_size(), 0);
  EXPECT_EQ(s.subchecks_size(), 0);
  EXPECT_EQ(s.cpu_samples_size(), 0);
  EXPECT_EQ(s.latency_size(), 0);
}

}  // namespace
}  // namespace hucprof
