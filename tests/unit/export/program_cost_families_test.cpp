#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>

#include "rendered_lines.h"

namespace hucprof {
namespace {

using ::testing::Contains;
using ::testing::HasSubstr;
using ::testing::Not;

void add_program(v1::Snapshot& s, const char* name, uint64_t runs, uint64_t run_ns) {
  auto* p = s.add_bpf_programs();
  p->set_program(name);
  p->set_runs(runs);
  p->set_run_ns(run_ns);
}

TEST(ProgramCostFamilies, StatsOnRendersRunsAndSecondsByProgram) {
  v1::Snapshot s;
  s.set_bpf_stats(v1::BPF_STATS_ON);
  add_program(s, "huc_sample", 4990, 12'500'000'000);
  add_program(s, "huc_fentry_check", 7, 14'000);
  const auto lines = rendered(s);
  EXPECT_THAT(lines, Contains("hucprof_bpf_stats_enabled 1"));
  EXPECT_THAT(lines, Contains("# TYPE hucprof_bpf_program_runs_total counter"));
  EXPECT_THAT(lines, Contains("hucprof_bpf_program_runs_total{program=\"huc_sample\"} 4990"));
  EXPECT_THAT(lines, Contains("hucprof_bpf_program_runs_total{program=\"huc_fentry_check\"} 7"));
  EXPECT_THAT(lines, Contains("# TYPE hucprof_bpf_program_run_seconds_total counter"));
  EXPECT_THAT(lines,
              Contains("hucprof_bpf_program_run_seconds_total{program=\"huc_sample\"} 12.5"));
  EXPECT_THAT(
      lines,
      Contains("hucprof_bpf_program_run_seconds_total{program=\"huc_fentry_check\"} 1.4e-05"));
}

TEST(ProgramCostFamilies, StatsOffSaysSoAndHasNoProgramSeries) {
  v1::Snapshot s;
  s.set_bpf_stats(v1::BPF_STATS_OFF);
  const auto lines = rendered(s);
  EXPECT_THAT(lines, Contains("hucprof_bpf_stats_enabled 0"));
  // Described (HELP/TYPE, like every family), but no made-up zero.
  EXPECT_THAT(lines, Contains("# TYPE hucprof_bpf_program_runs_total counter"));
  EXPECT_THAT(lines, Not(Contains(HasSubstr("hucprof_bpf_program_runs_total{"))));
  EXPECT_THAT(lines, Not(Contains(HasSubstr("hucprof_bpf_program_run_seconds_total{"))));
}

TEST(ProgramCostFamilies, UnreadableSysctlHasNoStatsSample) {
  const auto lines = rendered(v1::Snapshot());
  EXPECT_THAT(lines, Contains("# TYPE hucprof_bpf_stats_enabled gauge"));
  EXPECT_THAT(lines, Not(Contains(HasSubstr("hucprof_bpf_stats_enabled 0"))));
  EXPECT_THAT(lines, Not(Contains(HasSubstr("hucprof_bpf_stats_enabled 1"))));
}

}  // namespace
}  // namespace hucprof
