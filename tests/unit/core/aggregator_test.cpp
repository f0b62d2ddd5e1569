#include "core/drain/aggregator.h"

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
  // earlier 1 stays in other); b is no longer exported, its new increment goes to other.
  IntervalDeltas d2;
  d2.checks = {check("a", 1), check("b", 1), check("c", 100)};
  agg.apply(d2);
  EXPECT_EQ(calls_by_callsite(snapshot_of(agg)),
            (std::map<std::string, uint64_t>{{"a", 11}, {"c", 100}, {"other", 2}}));

  // b comes back and a leaves: b continues from its named 5, not from what other holds for it.
  IntervalDeltas d3;
  d3.checks = {check("b", 1000)};
  agg.apply(d3);
  EXPECT_EQ(calls_by_callsite(snapshot_of(agg)),
            (std::map<std::string, uint64_t>{{"b", 1005}, {"c", 100}, {"other", 2}}));
  EXPECT_EQ(snapshot_of(agg).intervals(), 3u);
}

// SIGHUP may change --top-k while running: from the next interval on the new K decides.
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
  agg.apply(d);  // b and c are no longer exported, their increments go to other again
  EXPECT_EQ(calls_by_callsite(snapshot_of(agg)),
            (std::map<std::string, uint64_t>{{"a", 30}, {"other", 12}}));
}

// What Prometheus' rate() sees of a series: its increase since its last exported value, which it
// keeps while the series is absent. Summed over all series it must be the interval's deltas.
template <typename Labels>
uint64_t increase_seen(const std::map<Labels, uint64_t>& exported,
                       std::map<Labels, uint64_t>& last_seen) {
  uint64_t sum = 0;
  for (const auto& [labels, value] : exported) {
    uint64_t& last = last_seen[labels];
    EXPECT_GE(value, last) << std::get<0>(labels) << " went down";
    sum += value - last;
    last = value;
  }
  return sum;
}

// --top-k is a hard bound: 30 call sites come and go (each hot for a few intervals, then gone or
// back later) and at every fill each family names at most K call sites besides "other", no series
// ever goes down, and the increases a scraper sees add up to exactly what was counted.
TEST(Aggregator, TopKIsAHardBoundUnderChurn) {
  constexpr size_t kTopK = 3;
  Aggregator agg(kTopK);
  std::mt19937 rng(1234);
  std::vector<std::string> sites;
  for (int i = 0; i < 30; ++i) sites.push_back("site" + std::to_string(i));
  std::map<CheckLabels, uint64_t> last_checks;
  std::map<std::tuple<std::string, std::string, std::string>, uint64_t> last_samples;
  std::map<std::pair<std::string, std::string>, uint64_t> last_subchecks;
  std::map<std::tuple<std::string, std::string, std::string, std::string>, uint64_t> last_copies;
  std::map<std::tuple<std::string, std::string, std::string>, uint64_t> last_objects;
  std::set<std::string> ever_named;
  uint64_t all_samples = 0;

  for (int interval = 0; interval < 300; ++interval) {
    IntervalDeltas d;
    uint64_t calls_total = 0, samples_total = 0, subchecks_total = 0, copies_total = 0;
    uint64_t objects_total = 0;
    // A few sites live at a time; which ones moves on every 10 intervals, and the newcomers are
    // hotter than anything before them, so each takes a place in the top-K.
    const size_t first = (interval / 10) % sites.size();
    for (size_t j = 0; j < 4; ++j) {
      const std::string& site = sites[(first + j * 7) % sites.size()];
      const uint64_t calls = 10 + rng() % 10 + static_cast<uint64_t>(interval) * 3;
      const uint64_t samples = rng() % 5 + static_cast<uint64_t>(interval);
      d.checks.push_back(check(site, calls, j % 2 ? "read" : "recvfrom"));
      d.subchecks.push_back({site, "stack_object", calls / 2});
      d.objects.push_back({site, "slab", "[unknown]", calls / 3, "unknown"});
      objects_total += calls / 3;
      d.samples.push_back({site, "recvfrom", "entry", samples});
      d.copies.push_back({site, "recvfrom", "", "copy_to_iter", 0, samples});
      calls_total += calls;
      subchecks_total += calls / 2;
      samples_total += samples;
      copies_total += samples;
    }
    agg.apply(d);
    const v1::Snapshot s = snapshot_of(agg);
    all_samples += samples_total;
    // The one total counts every call site's samples, named, in other or named no longer.
    ASSERT_EQ(s.check_samples(), all_samples) << "interval " << interval;

    std::set<std::string> checks_named, samples_named, subchecks_named, copies_named;
    std::map<CheckLabels, uint64_t> checks;
    for (const auto& c : s.checks()) {
      checks[{c.callsite(), c.syscall(), c.direction()}] = c.calls();
      if (c.callsite() != "other") checks_named.insert(c.callsite());
    }
    std::map<std::tuple<std::string, std::string, std::string>, uint64_t> samples;
    for (const auto& c : s.cpu_samples()) {
      samples[{c.callsite(), c.syscall(), c.step()}] = c.samples();
      if (c.callsite() != "other") samples_named.insert(c.callsite());
    }
    std::map<std::pair<std::string, std::string>, uint64_t> subchecks;
    for (const auto& c : s.subchecks()) {
      subchecks[{c.callsite(), c.step()}] = c.count();
      if (c.callsite() != "other") subchecks_named.insert(c.callsite());
    }
    std::set<std::string> objects_named;
    std::map<std::tuple<std::string, std::string, std::string>, uint64_t> objects;
    for (const auto& c : s.object_checks()) {
      objects[{c.callsite(), c.object_kind(), c.object()}] = c.count();
      if (c.callsite() != "other") objects_named.insert(c.callsite());
    }
    std::map<std::tuple<std::string, std::string, std::string, std::string>, uint64_t> copies;
    for (const auto& c : s.copy_cpu_samples()) {
      copies[{c.callsite(), c.syscall(), c.copy(), ""}] = c.samples();
      if (c.callsite() != "other") copies_named.insert(c.callsite());
    }
    for (const auto* named :
         {&checks_named, &samples_named, &subchecks_named, &copies_named, &objects_named}) {
      ASSERT_LE(named->size(), kTopK) << "interval " << interval;
    }
    ever_named.insert(checks_named.begin(), checks_named.end());
    ASSERT_EQ(increase_seen(checks, last_checks), calls_total) << "interval " << interval;
    ASSERT_EQ(increase_seen(samples, last_samples), samples_total) << "interval " << interval;
    ASSERT_EQ(increase_seen(subchecks, last_subchecks), subchecks_total) << interval;
    ASSERT_EQ(increase_seen(copies, last_copies), copies_total) << "interval " << interval;
    ASSERT_EQ(increase_seen(objects, last_objects), objects_total) << "interval " << interval;
  }
  EXPECT_GE(ever_named.size(), 20u) << "the churn named at least 20 call sites over the run";
}

TEST(Aggregator, CpuSamplesAreRankedBySamplesNotCalls) {
  Aggregator agg(1);
  IntervalDeltas d;
  d.checks = {check("many_calls", 1000), check("slow_calls", 1)};
  d.samples = {{"many_calls", "recvfrom", "entry", 2}, {"slow_calls", "recvmsg", "vmap_area", 50}};
  agg.apply(d);
  auto s = snapshot_of(agg);
  EXPECT_EQ(calls_by_callsite(s),
            (std::map<std::string, uint64_t>{{"many_calls", 1000}, {"other", 1}}));
  ASSERT_EQ(s.cpu_samples_size(), 2);
  // Sorted: "other" < "slow_calls".
  EXPECT_EQ(s.cpu_samples(0).callsite(), "other");
  EXPECT_EQ(s.cpu_samples(0).syscall(), "recvfrom");
  EXPECT_EQ(s.cpu_samples(0).step(), "entry");
  EXPECT_EQ(s.cpu_samples(0).samples(), 2u);
  EXPECT_EQ(s.cpu_samples(1).callsite(), "slow_calls");
  EXPECT_EQ(s.cpu_samples(1).step(), "vmap_area");
  EXPECT_EQ(s.cpu_samples(1).samples(), 50u);
}

// The prediction's input: a label that left the top-K keeps its value there, unexported, and
// what came after it is "other"'s, so each total only grows and their sum is all there was.
TEST(Aggregator, CostTotalsKeepALabelThatLeftTheTopKAtItsValue) {
  Aggregator agg(1);
  IntervalDeltas first;
  first.samples = {{"a", "recvfrom", "entry", 10}, {"b", "sendto", "entry", 5}};
  first.sampled_by_context = {{"kernel", 100}, {"user", 50}, {"idle", 1000}};
  first.latency = {{"a", {0, 0, 0, 4}}};
  agg.apply(first);
  IntervalDeltas second;
  second.samples = {{"a", "recvfrom", "entry", 1}, {"b", "sendto", "entry", 20}};
  second.sampled_by_context = {{"kernel", 100}};
  agg.apply(second);

  const CostTotals t = agg.cost_totals();
  EXPECT_EQ(t.check_samples.by_callsite,
            (std::map<std::string, uint64_t>{{"a", 10}, {"b", 20}, {"other", 6}}));
  EXPECT_EQ(t.check_samples.exported, (std::set<std::string>{"b", "other"}));
  EXPECT_EQ(t.busy_samples, 250u) << "kernel + user, idle left out";
  const v1::Snapshot s = snapshot_of(agg);
  EXPECT_EQ(s.check_samples(), 36u) << "the totals add up to every sample counted";
  ASSERT_EQ(s.latency_size(), 1);
  EXPECT_EQ(t.check_ns.by_callsite,
            (std::map<std::string, uint64_t>{{"a", s.latency(0).sum_ns()}}));
  EXPECT_EQ(t.check_ns.exported, (std::set<std::string>{"a"}));
}

TEST(Aggregator, SubchecksFollowTheCallsRanking) {
  Aggregator agg(1);
  IntervalDeltas d;
  d.checks = {check("top", 10), check("low", 1)};
  d.subchecks = {{"top", "slab_object", 7},
                 {"low", "vmap_area", 1},
                 {"low", "slab_object", 1},
                 {"also_low", "slab_object", 2}};
  agg.apply(d);
  auto s = snapshot_of(agg);
  std::map<std::pair<std::string, std::string>, uint64_t> got;
  for (const auto& c : s.subchecks()) got[{c.callsite(), c.step()}] = c.count();
  EXPECT_EQ(got,
            (std::map<std::pair<std::string, std::string>, uint64_t>{{{"other", "slab_object"}, 3},
                                                                     {{"other", "vmap_area"}, 1},
                                                                     {{"top", "slab_object"}, 7}}));
}

using ObjectLabels = std::tuple<std::string, std::string, std::string, std::string>;

std::map<ObjectLabels, uint64_t> objects_by_series(const v1::Snapshot& s) {
  std::map<ObjectLabels, uint64_t> out;
  for (const auto& c : s.object_checks()) {
    out[{c.callsite(), c.object_kind(), c.object(), c.region()}] = c.count();
  }
  return out;
}

// A call site's caches are ranked among themselves like call sites: its top-K by checks named,
// the rest "other"; unidentified objects stay "[unknown]" whatever the ranking; and a cache
// that leaves the top-K keeps its value unexported while its increments go to "other".
TEST(Aggregator, ObjectsAreTopKPerCallSite) {
  Aggregator agg(2);
  IntervalDeltas d;
  d.checks = {check("udp_recvmsg", 100), check("tcp_recvmsg", 50)};
  d.objects = {{"udp_recvmsg", "slab", "kmalloc-512", 40, "inside"},
               {"udp_recvmsg", "slab", "kmalloc-1k", 30, "inside"},
               {"udp_recvmsg", "slab", "kmalloc-64", 3, "inside"},
               {"udp_recvmsg", "slab", "kmalloc-64", 1, "outside"},
               {"udp_recvmsg", "slab", "[unknown]", 2, "unknown"},
               {"udp_recvmsg", "stack", "[unknown]", 24, "none"},
               {"tcp_recvmsg", "slab", "kmalloc-64", 50, "inside"}};
  agg.apply(d);
  EXPECT_EQ(
      objects_by_series(snapshot_of(agg)),
      (std::map<ObjectLabels, uint64_t>{{{"tcp_recvmsg", "slab", "kmalloc-64", "inside"}, 50},
                                        {{"udp_recvmsg", "slab", "[unknown]", "unknown"}, 2},
                                        {{"udp_recvmsg", "slab", "kmalloc-1k", "inside"}, 30},
                                        {{"udp_recvmsg", "slab", "kmalloc-512", "inside"}, 40},
                                        {{"udp_recvmsg", "slab", "other", "inside"}, 3},
                                        {{"udp_recvmsg", "slab", "other", "outside"}, 1},
                                        {{"udp_recvmsg", "stack", "[unknown]", "none"}, 24}}));

  IntervalDeltas more;
  more.checks = {check("udp_recvmsg", 100)};
  more.objects = {{"udp_recvmsg", "slab", "kmalloc-64", 100, "inside"},
                  {"udp_recvmsg", "slab", "kmalloc-1k", 5, "inside"}};
  agg.apply(more);
  const auto series = objects_by_series(snapshot_of(agg));
  EXPECT_EQ(series.at({"udp_recvmsg", "slab", "kmalloc-64", "inside"}), 100u);
  EXPECT_EQ(series.at({"udp_recvmsg", "slab", "kmalloc-512", "inside"}), 40u);
  EXPECT_EQ(series.at({"udp_recvmsg", "slab", "other", "inside"}), 3u + 5u);
  EXPECT_FALSE(series.contains({"udp_recvmsg", "slab", "kmalloc-1k", "inside"}));
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
  d.subchecks = {{"idle_site", "slab_object", 0}};
  d.samples = {{"idle_site", "read", "entry", 0}};
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
