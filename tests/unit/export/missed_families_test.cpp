#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>

#include "rendered_lines.h"

namespace hucprof {
namespace {

using ::testing::Contains;
using ::testing::HasSubstr;
using ::testing::Not;

void add_missed(v1::Snapshot& s, const char* what, const char* reason, uint64_t count) {
  auto* m = s.add_missed();
  m->set_what(what);
  m->set_reason(reason);
  m->set_count(count);
}

void add_coverage(v1::Snapshot& s, const char* what, bool counted, const char* why = "") {
  auto* c = s.add_missed_coverage();
  c->set_what(what);
  c->set_counted(counted);
  c->set_uncounted(why);
}

TEST(MissedFamilies, SkippedChecksByTheKernelsCounterBesideTheExactOnes) {
  v1::Snapshot s;
  add_missed(s, "checks", "recursion", 36);
  add_missed(s, "checks", "kprobe_missed", 2);
  add_missed(s, "subchecks", "recursion", 5);
  add_coverage(s, "checks", true);
  const auto lines = rendered(s);
  EXPECT_THAT(lines, Contains("# TYPE usercopy_checks_missed_total counter"));
  EXPECT_THAT(lines, Contains("usercopy_checks_missed_total{reason=\"recursion\"} 36"));
  EXPECT_THAT(lines, Contains("usercopy_checks_missed_total{reason=\"kprobe_missed\"} 2"));
  // Sub-checks are not checks: they stay out of this family.
  EXPECT_THAT(lines, Not(Contains("usercopy_checks_missed_total{reason=\"recursion\"} 5")));
  EXPECT_THAT(lines, Contains("hucprof_missed_runs_info{what=\"checks\",counted=\"yes\","
                              "reason=\"\"} 1"));
}

TEST(MissedFamilies, WhatTheKernelDoesNotCountHasNoSeriesButSaysWhy) {
  v1::Snapshot s;
  add_coverage(s, "checks", false, "not before 6.7");
  add_coverage(s, "samples", false, "never counted");
  const auto lines = rendered(s);
  EXPECT_THAT(lines, Contains("# TYPE usercopy_checks_missed_total counter"));
  EXPECT_THAT(lines, Not(Contains(HasSubstr("usercopy_checks_missed_total{"))));
  EXPECT_THAT(lines, Contains("hucprof_missed_runs_info{what=\"checks\",counted=\"no\","
                              "reason=\"not before 6.7\"} 1"));
  EXPECT_THAT(lines, Contains("hucprof_missed_runs_info{what=\"samples\",counted=\"no\","
                              "reason=\"never counted\"} 1"));
}

}  // namespace
}  // namespace hucprof
