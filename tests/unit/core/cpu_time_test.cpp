#include "core/kernel/cpu_time.h"

#include <gtest/gtest.h>

#include <set>

namespace hucprof {
namespace {

TEST(CpuClockPeriod, TheNominalPeriodIsTheKernelsIntegerDivision) {
  EXPECT_EQ(cpu_clock_period_ns(999), 1'001'001u);
  EXPECT_EQ(cpu_clock_period_ns(99), 10'101'010u);
  EXPECT_EQ(cpu_clock_period_ns(0), 0u);
}

// Eight CPUs in turn get eight periods a step of 1/2048 apart, centred on the nominal one: no
// two of them tick in step, and none is off by more than 3.5 steps.
TEST(CpuClockPeriod, EightCpusInTurnTickAtEightPeriodsAStepApart) {
  for (uint64_t hz : {1u, 99u, 999u, 1000u}) {
    const uint64_t nominal = cpu_clock_period_ns(hz);
    const uint64_t step = 2 * (nominal / 4096);  // whole half steps
    std::set<uint64_t> periods;
    uint64_t sum = 0;
    for (size_t i = 0; i < 8; ++i) {
      const uint64_t p = cpu_clock_period_ns_on(hz, i);
      periods.insert(p);
      sum += p;
      EXPECT_LE(p > nominal ? p - nominal : nominal - p, step * 7 / 2) << hz << " Hz, CPU " << i;
    }
    EXPECT_EQ(periods.size(), 8u) << hz << " Hz";
    for (auto it = std::next(periods.begin()); it != periods.end(); ++it) {
      EXPECT_EQ(*it - *std::prev(it), step) << hz << " Hz";
    }
    // Centred: the mean period is the nominal one, to a nanosecond of rounding.
    EXPECT_NEAR(static_cast<double>(sum) / 8, static_cast<double>(nominal), 1.0) << hz << " Hz";
    // The first two CPUs are a step apart, one on each side of the nominal period.
    EXPECT_EQ(cpu_clock_period_ns_on(hz, 0) + step / 2, nominal) << hz << " Hz";
    EXPECT_EQ(cpu_clock_period_ns_on(hz, 1) - step / 2, nominal) << hz << " Hz";
    // And the ninth CPU again has the first one's.
    EXPECT_EQ(cpu_clock_period_ns_on(hz, 8), cpu_clock_period_ns_on(hz, 0));
  }
}

TEST(CpuClockPeriod, WithoutAFrequencyThereIsNoPeriod) {
  EXPECT_EQ(cpu_clock_period_ns_on(0, 3), 0u);
}

}  // namespace
}  // namespace hucprof
