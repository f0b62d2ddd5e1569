#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include "export/metrics/process_metrics.h"
#include "export/metrics/prometheus_exporter.h"
#include "text_lines.h"

namespace hucprof {
namespace {

using ::testing::Contains;
using ::testing::IsEmpty;

// A real /proc/self/stat line, with a comm that contains spaces and a ')'.
constexpr const char* kStat =
    "4242 (huc prof) x) S 1 4242 4242 0 -1 4194560 1500 0 2 0 250 50 0 0 20 0 3 0 "
    "123400 104857600 2560 18446744073709551615 1 1 0 0 0 0 0 4096 0 0 0 0 17 1 0 0 0 0 0\n";

constexpr const char* kLimits =
    "Limit                     Soft Limit           Hard Limit           Units     \n"
    "Max cpu time              unlimited            unlimited            seconds   \n"
    "Max open files            1024                 524288               files     \n"
    "Max locked memory         8388608              8388608              bytes     \n";

TEST(ProcessMetrics, ParsesSelfStatAfterTheLastParenthesis) {
  const auto stat = parse_self_stat(kStat);
  ASSERT_TRUE(stat.has_value());
  EXPECT_EQ(stat->cpu_ticks, 300u);  // utime 250 + stime 50
  EXPECT_EQ(stat->start_ticks, 123400u);
  EXPECT_EQ(stat->virtual_bytes, 104857600u);
  EXPECT_EQ(stat->resident_pages, 2560u);
  EXPECT_FALSE(parse_self_stat("garbage").has_value());
  EXPECT_FALSE(parse_self_stat("1 (x) S 1 2").has_value());
}

TEST(ProcessMetrics, ParsesBootTimeAndFdLimit) {
  EXPECT_EQ(parse_boot_time("cpu  1 2 3\nbtime 1700000000\nprocesses 9\n"), 1700000000u);
  EXPECT_FALSE(parse_boot_time("cpu 1 2 3\n").has_value());
  EXPECT_EQ(parse_max_open_files(kLimits), 1024u);
  EXPECT_FALSE(parse_max_open_files("Max open files unlimited unlimited files\n").has_value());
}

// A number as the text serializer prints it (16 significant digits).
std::string as_text(double value) {
  std::ostringstream out;
  out.precision(16);
  out << value;
  return out.str();
}

class FakeProc : public ::testing::Test {
 protected:
  void SetUp() override {
    root_ = std::filesystem::path(::testing::TempDir()) / ("fakeproc-" + std::to_string(getpid()));
    std::filesystem::remove_all(root_);
    std::filesystem::create_directories(root_ / "self" / "fd");
    std::ofstream(root_ / "self" / "stat") << kStat;
    std::ofstream(root_ / "self" / "limits") << kLimits;
    std::ofstream(root_ / "stat") << "cpu  1 2 3\nbtime 1700000000\n";
    for (const char* fd : {"0", "1", "2", "5"}) std::ofstream(root_ / "self" / "fd" / fd) << "";
  }
  void TearDown() override { std::filesystem::remove_all(root_); }
  ProcSources sources() const { return {(root_ / "self").string(), (root_ / "stat").string()}; }

  std::filesystem::path root_;
};

TEST_F(FakeProc, ExportsWhatTheOfficialClientsExport) {
  const double ticks = static_cast<double>(sysconf(_SC_CLK_TCK));
  const double page = static_cast<double>(sysconf(_SC_PAGESIZE));
  const auto lines = text_lines(render_text(process_families(sources())));
  EXPECT_THAT(lines, Contains("# TYPE process_cpu_seconds_total counter"));
  EXPECT_THAT(lines, Contains("process_cpu_seconds_total " + as_text(300 / ticks)));
  EXPECT_THAT(lines, Contains("process_resident_memory_bytes " + as_text(2560 * page)));
  EXPECT_THAT(lines, Contains("process_virtual_memory_bytes 104857600"));
  EXPECT_THAT(lines,
              Contains("process_start_time_seconds " + as_text(1700000000 + 123400 / ticks)));
  EXPECT_THAT(lines, Contains("process_open_fds 4"));
  EXPECT_THAT(lines, Contains("process_max_fds 1024"));
}

TEST_F(FakeProc, LeavesOutWhatCannotBeRead) {
  std::filesystem::remove(root_ / "self" / "stat");
  std::filesystem::remove(root_ / "self" / "limits");
  std::filesystem::remove_all(root_ / "self" / "fd");
  EXPECT_THAT(process_families(sources()), IsEmpty());
}

TEST(ProcessMetrics, RealProcSelfHasEveryFamily) {
  const auto families = process_families();
  ASSERT_EQ(families.size(), 6u);
  for (const auto& family : families) {
    ASSERT_EQ(family.metric.size(), 1u) << family.name;
    const auto& m = family.metric[0];
    EXPECT_GT(family.name == "process_cpu_seconds_total" ? m.counter.value + 1 : m.gauge.value, 0)
        << family.name;
  }
}

}  // namespace
}  // namespace hucprof
