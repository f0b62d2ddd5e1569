#include "core/profile/report_rows.h"

#include <gtest/gtest.h>

#include "core/symbols/stack_interner.h"
#include "fixture_profile.h"

namespace hucprof {
namespace {

TEST(SortKeys, ParsesACommaList) {
  auto keys = parse_sort_keys("syscall,callsite,comm");
  ASSERT_TRUE(keys.ok());
  EXPECT_EQ(keys.value(),
            (std::vector<SortKey>{SortKey::Syscall, SortKey::Callsite, SortKey::Comm}));
  for (const SortKeyName& k : kSortKeyNames) {
    auto one = parse_sort_keys(k.name);
    ASSERT_TRUE(one.ok()) << k.name;
    EXPECT_EQ(one.value(), std::vector<SortKey>{k.key});
  }
}

TEST(SortKeys, RefusesWhatIsNotAKeyInOneLine) {
  for (const char* bad : {"sym", "callsite,dso", "", "callsite,", ",callsite", "callsite,,step",
                          "Callsite", "callsite ,step", "callsite,callsite"}) {
    auto keys = parse_sort_keys(bad);
    ASSERT_FALSE(keys.ok()) << bad;
    EXPECT_EQ(keys.error().exit_code, kExitBadInput);
    EXPECT_EQ(keys.error().text.find('\n'), std::string::npos);
    EXPECT_TRUE(keys.error().text.starts_with("--sort: ")) << keys.error().text;
  }
  EXPECT_NE(
      parse_sort_keys("sym").error().text.find("callsite, syscall, copy, step, workload, comm"),
      std::string::npos);
}

// fixture_profile.h: 7 samples at udp_recvmsg (recvfrom, object), 2 at netlink_recvmsg
// (recvmsg, vmalloc); 1000 calls of 64000 bytes at udp_recvmsg; 3 sub-check runs (not a row).
TEST(RowsByKeys, SumsTheFixtureByCallSite) {
  StackInterner interner;
  const StackProfile p = fixture_profile(interner);
  const auto rows = rows_by_keys(p, {SortKey::Callsite});
  ASSERT_EQ(rows.size(), 2u);
  EXPECT_EQ(rows[0].key, std::vector<std::string>{"udp_recvmsg"});
  EXPECT_EQ(rows[0].samples, 7u);
  EXPECT_EQ(rows[0].calls, 1000u);
  EXPECT_EQ(rows[0].bytes, 64000u);
  EXPECT_EQ(rows[1].key, std::vector<std::string>{"netlink_recvmsg"});
  EXPECT_EQ(rows[1].samples, 2u);
  EXPECT_EQ(rows[1].calls, 0u);
}

TEST(RowsByKeys, SplitsByEveryKeyGiven) {
  StackInterner interner;
  const StackProfile p = fixture_profile(interner);
  // The udp_recvmsg calls carry no step: a row of their own, after the sampled ones.
  const auto rows = rows_by_keys(p, {SortKey::Step, SortKey::Syscall});
  ASSERT_EQ(rows.size(), 3u);
  EXPECT_EQ(rows[0].key, (std::vector<std::string>{"object", "recvfrom"}));
  EXPECT_EQ(rows[0].samples, 7u);
  EXPECT_EQ(rows[1].key, (std::vector<std::string>{"vmalloc", "recvmsg"}));
  EXPECT_EQ(rows[1].samples, 2u);
  EXPECT_EQ(rows[2].key, (std::vector<std::string>{"", "recvfrom"}));
  EXPECT_EQ(rows[2].calls, 1000u);
}

TEST(RowsByKeys, RanksByCallsWithoutSampling) {
  StackInterner interner;
  StackProfile p = fixture_profile(interner);
  p.sampling = false;
  const auto rows = rows_by_keys(p, {SortKey::Callsite});
  ASSERT_FALSE(rows.empty());
  EXPECT_EQ(rows[0].key, std::vector<std::string>{"udp_recvmsg"});
  EXPECT_EQ(rows[0].rank(false), 1000u);
  EXPECT_EQ(rows.size(), 1u);  // netlink_recvmsg has samples only, which do not count here
}

TEST(RowsByKeys, CommOnlyWhereTheProfileCarriesIt) {
  StackInterner interner;
  StackProfile p = fixture_profile(interner);
  EXPECT_FALSE(profile_has_key(p, SortKey::Comm));
  EXPECT_FALSE(profile_has_key(p, SortKey::Copy));
  EXPECT_TRUE(profile_has_key(p, SortKey::Callsite));
  ProfileLabels labels = *p.samples[0].labels;
  labels.comm = "iperf3";
  p.samples[0].labels = make_labels(labels);
  EXPECT_TRUE(profile_has_key(p, SortKey::Comm));
  // The rest (netlink's samples, udp's calls) names no command: one row with "".
  const auto rows = rows_by_keys(p, {SortKey::Comm});
  ASSERT_EQ(rows.size(), 2u);
  EXPECT_EQ(rows[0].key, std::vector<std::string>{"iperf3"});
  EXPECT_EQ(rows[0].samples, 7u);
  EXPECT_EQ(rows[1].key, std::vector<std::string>{""});
  EXPECT_EQ(rows[1].samples, 2u);
  EXPECT_EQ(rows[1].calls, 1000u);
}

TEST(RowsByKeys, PidOnlyWhereTheProfileCarriesIt) {
  StackInterner interner;
  StackProfile p = fixture_profile(interner);
  EXPECT_FALSE(profile_has_key(p, SortKey::Pid));
  p.samples[0].labels = interner.with_task(p.samples[0].labels, "iperf3", 4242);
  EXPECT_TRUE(profile_has_key(p, SortKey::Pid));
  const auto rows = rows_by_keys(p, {SortKey::Comm, SortKey::Pid});
  ASSERT_EQ(rows.size(), 2u);
  EXPECT_EQ(rows[0].key, (std::vector<std::string>{"iperf3", "4242"}));
  EXPECT_EQ(rows[1].key, (std::vector<std::string>{"", ""}));
}

TEST(PercentLimit, HidesRowsBelowAndCountsThem) {
  std::vector<KeyedRow> rows{
      {{"a"}, 50, 0, 0}, {{"b"}, 10, 0, 0}, {{"c"}, 4, 0, 0}, {{"d"}, 1, 0, 0}};
  // Of 200 busy samples: 25 %, 5 %, 2 %, 0.5 %.
  const LimitedRows limited = apply_percent_limit(rows, true, 200, 5);
  ASSERT_EQ(limited.shown.size(), 2u);  // 5 % is not below 5 %
  EXPECT_EQ(limited.shown[1].key, std::vector<std::string>{"b"});
  EXPECT_EQ(limited.hidden, 2u);
  EXPECT_EQ(limited.hidden_rank, 5u);
  EXPECT_EQ(apply_percent_limit(rows, true, 200, 0).hidden, 0u);
  EXPECT_EQ(apply_percent_limit(rows, true, 200, 100).shown.size(), 0u);
}

}  // namespace
}  // namespace hucprof
