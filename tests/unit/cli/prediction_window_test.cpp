#include <gtest/gtest.h>

#include <chrono>

#include "parse_helpers.h"

namespace hucprof {
namespace {

using std::chrono::milliseconds;

TEST(PredictionWindow, DefaultIsFiveMinutesLikeTheRecordingRules) {
  EXPECT_EQ(parse_run({"run"}).prediction_window, milliseconds(300'000));
}

TEST(PredictionWindow, TakesDurations) {
  EXPECT_EQ(parse_run({"run", "--prediction.window", "1m"}).prediction_window,
            milliseconds(60'000));
  EXPECT_EQ(parse_run({"run", "--prediction.window=1h30m"}).prediction_window,
            milliseconds(5'400'000));
}

TEST(PredictionWindow, OutOfRangeOrMalformedNamesTheFlag) {
  EXPECT_EQ(parse_error({"run", "--prediction.window", "500ms"}),
            "--prediction.window: \"500ms\" is out of range 1s..24h");
  EXPECT_EQ(parse_error({"run", "--prediction.window", "25h"}),
            "--prediction.window: \"25h\" is out of range 1s..24h");
  EXPECT_EQ(parse_error({"run", "--prediction.window", "5"}),
            "--prediction.window: \"5\" has no unit (use ms, s, m or h, e.g. 10s)");
}

class PredictionWindowConfig : public ConfigFileTest {};

TEST_F(PredictionWindowConfig, SameKeyInTheConfigFile) {
  EXPECT_EQ(
      parse_run({"run", "--config", write("w.yaml", "prediction.window: 15m\n")}).prediction_window,
      milliseconds(900'000));
}

}  // namespace
}  // namespace hucprof
