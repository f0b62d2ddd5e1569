#include "core/drain/skipped_samples.h"

#include <gtest/gtest.h>

namespace hucprof {
namespace {

// 1 ms periods (-F 1000): a CPU whose clock counted c ms owed c runs.
constexpr uint64_t kMs = 1'000'000;

TEST(SkippedSamples, ACpuThatGotEveryRunItOwedSkippedNone) {
  SkippedSamples skipped(kMs);
  EXPECT_EQ(skipped.update({{0, 10 * kMs, 10}, {1, 10 * kMs + 999'999, 10}}), 0u);
  EXPECT_EQ(skipped.update({{0, 250 * kMs, 250}, {1, 250 * kMs, 250}}), 0u);
}

TEST(SkippedSamples, RunsShortOfWhatTheClockOwedAreSkippedOnceTwoDrainsAgree) {
  SkippedSamples skipped(kMs);
  EXPECT_EQ(skipped.update({{0, 100 * kMs, 100}}), 0u);
  // 7 runs short now: the first drain to see it cannot tell a skip from a run about to come.
  EXPECT_EQ(skipped.update({{0, 200 * kMs, 193}}), 0u);
  EXPECT_EQ(skipped.update({{0, 300 * kMs, 293}}), 7u);
  // Nothing more skipped: the total stays.
  EXPECT_EQ(skipped.update({{0, 400 * kMs, 393}}), 7u);
}

TEST(SkippedSamples, ARunThatCameJustAfterTheClockWasReadIsNoSkip) {
  SkippedSamples skipped(kMs);
  skipped.update({{0, 0, 0}});
  // The period ended before the clock was read, its run came after the runs were read.
  EXPECT_EQ(skipped.update({{0, 100 * kMs + 3, 99}}), 0u);
  EXPECT_EQ(skipped.update({{0, 200 * kMs + 3, 200}}), 0u);
  // And a run counted before its period was (runs read after the clock): none either.
  EXPECT_EQ(skipped.update({{0, 300 * kMs - 1, 300}}), 0u);
  EXPECT_EQ(skipped.update({{0, 400 * kMs, 400}}), 0u);
}

TEST(SkippedSamples, EachCpuSettlesOnItsOwnAndTheTotalSumsThem) {
  SkippedSamples skipped(kMs);
  skipped.update({{0, 0, 0}, {3, 0, 0}});
  skipped.update({{0, 50 * kMs, 45}, {3, 50 * kMs, 48}});
  EXPECT_EQ(skipped.update({{0, 90 * kMs, 85}, {3, 90 * kMs, 88}}), 7u);
  // CPU 3 gets one more skipped; CPU 0 a run just late (one drain only).
  skipped.update({{0, 95 * kMs, 89}, {3, 95 * kMs, 92}});
  EXPECT_EQ(skipped.update({{0, 99 * kMs, 94}, {3, 99 * kMs, 96}}), 8u);
}

TEST(SkippedSamples, TheTotalNeverGoesDown) {
  SkippedSamples skipped(kMs);
  skipped.update({{0, 0, 0}});
  skipped.update({{0, 10 * kMs, 5}});
  EXPECT_EQ(skipped.update({{0, 20 * kMs, 15}}), 5u);
  // A shortfall that shrinks (a CPU's runs cannot outgrow its clock, but the two reads can
  // disagree) takes nothing back.
  EXPECT_EQ(skipped.update({{0, 30 * kMs, 27}}), 5u);
  EXPECT_EQ(skipped.update({{0, 40 * kMs, 36}}), 5u);
}

TEST(SkippedSamples, ACpuFirstSeenLaterStartsFromItsOwnFirstDrain) {
  SkippedSamples skipped(kMs);
  skipped.update({{0, 0, 0}});
  EXPECT_EQ(skipped.update({{0, 10 * kMs, 10}, {1, 10 * kMs, 4}}), 0u);
  EXPECT_EQ(skipped.update({{0, 20 * kMs, 20}, {1, 20 * kMs, 14}}), 6u);
}

TEST(SkippedSamples, WithoutAPeriodNothingIsOwed) {
  SkippedSamples skipped(0);
  EXPECT_EQ(skipped.update({{0, 10 * kMs, 0}}), 0u);
  EXPECT_EQ(skipped.update({{0, 20 * kMs, 0}}), 0u);
}

}  // namespace
}  // namespace hucprof
