#include "core/kernel/proc_stat.h"

#include <gtest/gtest.h>

namespace hucprof {
namespace {

// The head of a real /proc/stat (6.1 guest, 1 CPU): user nice system idle iowait irq softirq
// steal guest guest_nice.
constexpr const char* kProcStat =
    "cpu  1208 3 2710 9121 41 0 377 5 900 7\n"
    "cpu0 1208 3 2710 9121 41 0 377 5 900 7\n"
    "intr 1023 0 9 0\n";

TEST(ProcStat, BusyIsUserNiceSystemIrqSoftirq) {
  // 1208 + 3 + 2710 + 0 + 377 ticks at USER_HZ 100; idle, iowait, steal and guest left out.
  EXPECT_EQ(parse_busy_cpu_ns(kProcStat, 100), 4298ull * 10'000'000);
}

TEST(ProcStat, OtherTickRatesAreExact) {
  EXPECT_EQ(parse_busy_cpu_ns("cpu  1 0 0 0 0 0 0\n", 3), 333'333'333u);
  EXPECT_EQ(parse_busy_cpu_ns("cpu  1 0 0 0 0 0 0\n", 250), 4'000'000u);
}

TEST(ProcStat, MalformedTextIsNoValue) {
  EXPECT_FALSE(parse_busy_cpu_ns("", 100));
  EXPECT_FALSE(parse_busy_cpu_ns("intr 1 2 3\n", 100));
  EXPECT_FALSE(parse_busy_cpu_ns("cpu  1 2 3\n", 100)) << "fewer than seven fields";
  EXPECT_FALSE(parse_busy_cpu_ns("cpu  1 2 x 4 5 6 7\n", 100));
  EXPECT_FALSE(parse_busy_cpu_ns(kProcStat, 0));
}

TEST(ProcStat, ReadsThisMachine) {
  auto busy = read_busy_cpu_ns();
  ASSERT_TRUE(busy) << "/proc/stat of the machine running the tests";
  EXPECT_GT(*busy, 0u);
  EXPECT_FALSE(read_busy_cpu_ns("/nonexistent/stat"));
}

}  // namespace
}  // namespace hucprof
