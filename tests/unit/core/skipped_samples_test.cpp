#include "core/drain/skipped_samples.h"

#include <gtest/gtest.h>

namespace hucprof {
namespace {

// 1 ms periods (-F 1000): a CPU whose clock counted c ms owed c runs.
constexpr uint64_t kMs = 1'000'000;

TEST(SkippedSamples, ACpuThatGotEveryRunItOwedSkippedNone) {
  SkippedSamples skipped;
  EXPECT_EQ(skipped.update({{0, 10 * kMs, 10, kMs}, {1, 10 * kMs + 999'999, 10, kMs}}), 0u);
  EXPECT_EQ(skipped.update({{0, 250 * kMs, 250, kMs}, {1, 250 * kMs, 250, kMs}}), 0u);
}

TEST(SkippedSamples, RunsShortOfWhatTheClockOwedAreSkippedOnceTwoDrainsAgree) {
  SkippedSamples skipped;
  EXPECT_EQ(skipped.update({{0, 100 * kMs, 100, kMs}}), 0u);
  // 7 runs short now: the first drain to see it cannot tell a skip from a run about to come.
  EXPECT_EQ(skipped.update({{0, 200 * kMs, 193, kMs}}), 0u);
  EXPECT_EQ(skipped.update({{0, 300 * kMs, 293, kMs}}), 7u);
  // Nothing more skipped: the total stays.
  EXPECT_EQ(skipped.update({{0, 400 * kMs, 393, kMs}}), 7u);
}

TEST(SkippedSamples, ARunThatCameJustAfterTheClockWasReadIsNoSkip) {
  SkippedSamples skipped;
  skipped.update({{0, 0, 0, kMs}});
  // The period ended before the clock was read, its run came after the runs were read.
  EXPECT_EQ(skipped.update({{0, 100 * kMs + 3, 99, kMs}}), 0u);
  EXPECT_EQ(skipped.update({{0, 200 * kMs + 3, 200, kMs}}), 0u);
  // And a run counted before its period was (runs read after the clock): none either.
  EXPECT_EQ(skipped.update({{0, 300 * kMs - 1, 300, kMs}}), 0u);
  EXPECT_EQ(skipped.update({{0, 400 * kMs, 400, kMs}}), 0u);
}

TEST(SkippedSamples, EachCpuSettlesOnItsOwnAndTheTotalSumsThem) {
  SkippedSamples skipped;
  skipped.update({{0, 0, 0, kMs}, {3, 0, 0, kMs}});
  skipped.update({{0, 50 * kMs, 45, kMs}, {3, 50 * kMs, 48, kMs}});
  EXPECT_EQ(skipped.update({{0, 90 * kMs, 85, kMs}, {3, 90 * kMs, 88, kMs}}), 7u);
  // CPU 3 gets one more skipped; CPU 0 a run just late (one drain only).
  skipped.update({{0, 95 * kMs, 89, kMs}, {3, 95 * kMs, 92, kMs}});
  EXPECT_EQ(skipped.update({{0, 99 * kMs, 94, kMs}, {3, 99 * kMs, 96, kMs}}), 8u);
}

TEST(SkippedSamples, TheTotalNeverGoesDown) {
  SkippedSamples skipped;
  skipped.update({{0, 0, 0, kMs}});
  skipped.update({{0, 10 * kMs, 5, kMs}});
  EXPECT_EQ(skipped.update({{0, 20 * kMs, 15, kMs}}), 5u);
  // A shortfall that shrinks (a CPU's runs cannot outgrow its clock, but the two reads can
  // disagree) takes nothing back.
  EXPECT_EQ(skipped.update({{0, 30 * kMs, 27, kMs}}), 5u);
  EXPECT_EQ(skipped.update({{0, 40 * kMs, 36, kMs}}), 5u);
}

TEST(SkippedSamples, ACpuFirstSeenLaterStartsFromItsOwnFirstDrain) {
  SkippedSamples skipped;
  skipped.update({{0, 0, 0, kMs}});
  EXPECT_EQ(skipped.update({{0, 10 * kMs, 10, kMs}, {1, 10 * kMs, 4, kMs}}), 0u);
  EXPECT_EQ(skipped.update({{0, 20 * kMs, 20, kMs}, {1, 20 * kMs, 14, kMs}}), 6u);
}

TEST(SkippedSamples, WithoutAPeriodNothingIsOwed) {
  SkippedSamples skipped;
  EXPECT_EQ(skipped.update({{0, 10 * kMs, 0, 0}}), 0u);
  EXPECT_EQ(skipped.update({{0, 20 * kMs, 0, 0}}), 0u);
}

// Each CPU's event ticks at its own period (cpu_clock_period_ns_on): the same clock owes a CPU
// with a shorter period more runs.
TEST(SkippedSamples, EachCpuOwesRunsAtItsOwnPeriod) {
  SkippedSamples skipped;
  const uint64_t shorter = kMs - 1'000;
  skipped.update({{0, 0, 0, kMs}, {1, 0, 0, shorter}});
  // 1 s of clock: 1000 runs owed at 1 ms, 1001 at 999 µs.
  skipped.update({{0, 1000 * kMs, 1000, kMs}, {1, 1000 * kMs, 1000, shorter}});
  EXPECT_EQ(skipped.update({{0, 1000 * kMs, 1000, kMs}, {1, 1000 * kMs, 1000, shorter}}), 1u);
}

}  // namespace
}  // namespace hucprof
