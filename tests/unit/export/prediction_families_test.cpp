#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>

#include "rendered_lines.h"
#include "sample_snapshots.h"

namespace hucprof {
namespace {

using ::testing::Contains;
using ::testing::HasSubstr;
using ::testing::IsEmpty;
using ::testing::Not;

std::vector<std::string> series_of(const std::vector<std::string>& lines,
                                   const std::string& family) {
  std::vector<std::string> out;
  for (const auto& line : lines) {
    if (line.rfind(family + "{", 0) == 0 || line.rfind(family + " ", 0) == 0) out.push_back(line);
  }
  return out;
}

v1::Snapshot with_predictions() {
  v1::Snapshot s;
  s.set_busy_cpu_ns(12'500'000'000);
  auto* p = add_prediction(s, "sampling", 300, 0.25, 4.0 / 3);
  add_callsite_share(p, "udp_recvmsg", 0.2, 1.25);
  add_callsite_share(p, "udp_sendmsg", 0.05, 1 / 0.95);
  // An overshooting estimate: no speed-up series.
  add_prediction(s, "latency", 120, 1.5, std::nullopt);
  return s;
}

TEST(PredictionFamilies, SharesSpeedupsAndWindowPerEstimator) {
  const auto lines = rendered(with_predictions());
  EXPECT_THAT(lines, Contains("# TYPE usercopy_checks_busy_cpu_ratio gauge"));
  EXPECT_THAT(lines, Contains("usercopy_checks_busy_cpu_ratio{estimator=\"sampling\"} 0.25"));
  EXPECT_THAT(lines, Contains("usercopy_checks_busy_cpu_ratio{estimator=\"latency\"} 1.5"));
  EXPECT_THAT(lines, Contains("# TYPE usercopy_checks_off_speedup_ratio gauge"));
  EXPECT_THAT(series_of(lines, "usercopy_checks_off_speedup_ratio"),
              ::testing::ElementsAre(HasSubstr("{estimator=\"sampling\"} 1.333333333333333")));
  EXPECT_THAT(lines, Contains("usercopy_callsite_busy_cpu_ratio{estimator=\"sampling\","
                              "callsite=\"udp_recvmsg\"} 0.2"));
  EXPECT_THAT(lines, Contains("usercopy_callsite_off_speedup_ratio{estimator=\"sampling\","
                              "callsite=\"udp_recvmsg\"} 1.25"));
  EXPECT_THAT(lines, Contains("usercopy_prediction_window_seconds{estimator=\"latency\"} 120"));
  EXPECT_THAT(lines, Contains("usercopy_busy_cpu_seconds_total 12.5"));
}

TEST(PredictionFamilies, BoundsAndSamplesGoWithTheShare) {
  const auto lines = rendered(with_predictions());
  EXPECT_THAT(lines,
              Contains("usercopy_checks_busy_cpu_lower_ratio{estimator=\"sampling\"} 0.225"));
  EXPECT_THAT(lines,
              Contains("usercopy_checks_busy_cpu_upper_ratio{estimator=\"sampling\"} 0.275"));
  EXPECT_THAT(lines, Contains("usercopy_callsite_busy_cpu_lower_ratio{estimator=\"sampling\","
                              "callsite=\"udp_recvmsg\"} 0.18"));
  EXPECT_THAT(series_of(lines, "usercopy_prediction_needed_window_seconds"), IsEmpty())
      << "decided: nothing left to collect";
}

// Below the verdict rule no share and no speed-up is exported as an answer: the bounds, the
// window's samples and the span still needed say how far it is.
TEST(PredictionFamilies, CollectingExportsNoVerdict) {
  v1::Snapshot s;
  auto* p = add_prediction(s, "sampling", 1.5, 0.015, 1 / 0.985);
  p->set_decided(false);
  p->set_lower(0.005);
  p->set_upper(0.043);
  p->set_in_checks(3);
  p->set_busy(200);
  p->set_needed_window_seconds(40);
  p->set_design_effect(2.5);
  add_callsite_share(p, "udp_recvmsg", 0.015, 1 / 0.985);
  p->mutable_callsites(0)->set_decided(false);
  const auto lines = rendered(s);
  for (const char* family :
       {"usercopy_checks_busy_cpu_ratio", "usercopy_checks_off_speedup_ratio",
        "usercopy_callsite_busy_cpu_ratio", "usercopy_callsite_off_speedup_ratio"}) {
    EXPECT_THAT(series_of(lines, family), IsEmpty()) << family;
  }
  EXPECT_THAT(lines,
              Contains("usercopy_checks_busy_cpu_upper_ratio{estimator=\"sampling\"} 0.043"));
  EXPECT_THAT(lines, Contains("usercopy_prediction_check_samples{estimator=\"sampling\"} 3"));
  EXPECT_THAT(lines, Contains("usercopy_prediction_busy_samples{estimator=\"sampling\"} 200"));
  EXPECT_THAT(lines, Contains("usercopy_prediction_design_effect{estimator=\"sampling\"} 2.5"))
      << "the rules divide their counts by it while collecting too";
  EXPECT_THAT(lines,
              Contains("usercopy_prediction_needed_window_seconds{estimator=\"sampling\"} 40"));
}

TEST(PredictionFamilies, NoPredictionMeansNoSeriesButEveryFamilyDescribed) {
  const auto lines = rendered(v1::Snapshot());
  for (const char* family :
       {"usercopy_busy_cpu_seconds_total counter", "usercopy_checks_busy_cpu_ratio gauge",
        "usercopy_checks_off_speedup_ratio gauge", "usercopy_callsite_busy_cpu_ratio gauge",
        "usercopy_callsite_off_speedup_ratio gauge", "usercopy_prediction_window_seconds gauge"}) {
    EXPECT_THAT(lines, Contains(std::string("# TYPE ") + family)) << family;
  }
  for (const char* family : {"usercopy_busy_cpu_seconds_total", "usercopy_checks_busy_cpu_ratio",
                             "usercopy_checks_off_speedup_ratio"}) {
    EXPECT_THAT(series_of(lines, family), IsEmpty()) << family << ": no NaN, no made-up 0";
  }
  for (const auto& line : lines) EXPECT_THAT(line, Not(HasSubstr("NaN"))) << line;
}

}  // namespace
}  // namespace hucprof
