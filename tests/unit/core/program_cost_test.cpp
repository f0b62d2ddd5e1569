#include <gtest/gtest.h>

#include "core/drain/program_cost.h"

namespace hucprof {
namespace {

TEST(BpfStatsEnabled, ParsesTheSysctlText) {
  EXPECT_EQ(parse_bpf_stats_enabled(std::string("0\n")), BpfStats::off);
  EXPECT_EQ(parse_bpf_stats_enabled(std::string("1\n")), BpfStats::on);
  EXPECT_EQ(parse_bpf_stats_enabled(std::string("1")), BpfStats::on);
  EXPECT_EQ(parse_bpf_stats_enabled(std::nullopt), BpfStats::unknown);
  EXPECT_EQ(parse_bpf_stats_enabled(std::string("")), BpfStats::unknown);
  EXPECT_EQ(parse_bpf_stats_enabled(std::string("2\n")), BpfStats::unknown);
  EXPECT_EQ(parse_bpf_stats_enabled(std::string("10\n")), BpfStats::unknown);
}

ProgramCosts two_programs(BpfStats stats) {
  ProgramCosts costs;
  costs.stats = stats;
  costs.programs = {{"huc_sample", 4990, 12'000'000}, {"huc_fentry_check", 7, 14'000}};
  return costs;
}

TEST(FillProgramCosts, StatsOnCarriesEveryProgramSortedByName) {
  v1::Snapshot s;
  fill_program_costs(two_programs(BpfStats::on), s);
  EXPECT_EQ(s.bpf_stats(), v1::BPF_STATS_ON);
  ASSERT_EQ(s.bpf_programs_size(), 2);
  EXPECT_EQ(s.bpf_programs(0).program(), "huc_fentry_check");
  EXPECT_EQ(s.bpf_programs(0).runs(), 7u);
  EXPECT_EQ(s.bpf_programs(0).run_ns(), 14'000u);
  EXPECT_EQ(s.bpf_programs(1).program(), "huc_sample");
  EXPECT_EQ(s.bpf_programs(1).runs(), 4990u);
  EXPECT_EQ(s.bpf_programs(1).run_ns(), 12'000'000u);
}

TEST(FillProgramCosts, StatsOffOrUnknownCarriesNoProgram) {
  for (auto [stats, expected] : {std::pair{BpfStats::off, v1::BPF_STATS_OFF},
                                 std::pair{BpfStats::unknown, v1::BPF_STATS_UNKNOWN}}) {
    v1::Snapshot s;
    fill_program_costs(two_programs(stats), s);
    EXPECT_EQ(s.bpf_stats(), expected);
    EXPECT_EQ(s.bpf_programs_size(), 0);
  }
}

TEST(FillProgramCosts, SameNameIsOneSeries) {
  ProgramCosts costs = two_programs(BpfStats::on);
  costs.programs.push_back({"huc_sample", 10, 1'000});
  v1::Snapshot s;
  fill_program_costs(costs, s);
  ASSERT_EQ(s.bpf_programs_size(), 2);
  EXPECT_EQ(s.bpf_programs(1).runs(), 5000u);
  EXPECT_EQ(s.bpf_programs(1).run_ns(), 12'001'000u);
}

}  // namespace
}  // namespace hucprof
