// The /metrics reader of `hucprof top --from`: a daemon's page back into a Snapshot, and pages
// from anywhere else refused with one line that quotes none of their bytes.
#include "core/drain/metrics_snapshot.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "core/text/metrics_text.h"

namespace hucprof {
namespace {

using ::testing::HasSubstr;

// As a daemon serves it (prometheus-cpp's text format), abridged.
constexpr const char* kPage = R"(# HELP usercopy_checks_total Hardened-usercopy checks.
# TYPE usercopy_checks_total counter
usercopy_checks_total{callsite="udp_recvmsg",syscall="recvfrom",direction="to_user"} 7
usercopy_check_bytes_total{callsite="udp_recvmsg",syscall="recvfrom",direction="to_user"} 7168
# TYPE usercopy_cpu_samples_total counter
usercopy_cpu_samples_total{callsite="udp_recvmsg",syscall="recvfrom",step="entry"} 30
usercopy_cpu_samples_total{callsite="udp_recvmsg",syscall="recvfrom",step="slab_object"} 4
usercopy_cpu_samples_total{callsite="udp_sendmsg",syscall="sendto",step="virt_addr_valid"} 12
usercopy_sampled_cpu_samples_total{context="idle"} 100
usercopy_sampled_cpu_samples_total{context="kernel"} 668
usercopy_sampled_cpu_samples_total{context="user"} 1105
usercopy_checks_busy_cpu_lower_ratio{estimator="sampling"} 0.00921667682183654
usercopy_workload_cpu_seconds_total{workload="/x\"y\\z\n",workload_kind="cgroup"} 0.01010101
usercopy_hardened_enabled 1
hucprof_probe_attached{target="__check_object_size",mode="perf_event"} 1
hucprof_build_info{version="0.1.0",libbpf="1.4.5",kernel="6.18.44"} 1
hucprof_sample_frequency_hertz 99
# TYPE hucprof_drains_total counter
hucprof_drains_total 42
)";

hucprof::v1::Snapshot read_ok(const std::string& page) {
  auto read = snapshot_from_metrics(page);
  if (!read.ok()) {
    ADD_FAILURE() << read.error().text;
    return {};
  }
  return read.value();
}

std::string read_error(const std::string& page) {
  auto read = snapshot_from_metrics(page);
  EXPECT_FALSE(read.ok()) << "read: " << page.substr(0, 200);
  if (read.ok()) return "";
  EXPECT_EQ(read.error().text.find('\n'), std::string::npos) << read.error().text;
  return read.error().text;
}

TEST(MetricsSnapshot, ReadsWhatTheDaemonRendered) {
  const auto s = read_ok(kPage);
  ASSERT_EQ(s.checks_size(), 1);
  EXPECT_EQ(s.checks(0).callsite(), "udp_recvmsg");
  EXPECT_EQ(s.checks(0).direction(), "to_user");
  EXPECT_EQ(s.checks(0).calls(), 7u);
  EXPECT_EQ(s.checks(0).bytes(), 7168u);
  ASSERT_EQ(s.cpu_samples_size(), 3);
  EXPECT_EQ(s.cpu_samples(1).step(), "slab_object");
  EXPECT_EQ(s.cpu_samples(1).samples(), 4u);
  ASSERT_EQ(s.sampled_size(), 3);
  EXPECT_EQ(s.sampled(1).context(), "kernel");
  EXPECT_EQ(s.sampled(1).samples(), 668u);
  EXPECT_EQ(s.sample_frequency_hz(), 99u);
  EXPECT_TRUE(s.hardened_usercopy_enabled());
  ASSERT_EQ(s.probes_size(), 1);
  EXPECT_EQ(s.probes(0).mode(), "perf_event");
  EXPECT_TRUE(s.probes(0).attached());
  EXPECT_EQ(s.build().kernel(), "6.18.44");
  EXPECT_EQ(s.intervals(), 42u);  // the drains: whether a reading brings new counts
}

// The format's escapes in label values (\\, \", \n) and its optional parts: spaces in the label
// set, a trailing comma, a timestamp, no blank after '}', +Inf elsewhere, CRLF-free lines.
TEST(MetricsSnapshot, ReadsTheFormatsEscapesAndOptionalParts) {
  const auto s = read_ok(
      "usercopy_sampled_cpu_samples_total { context = \"kernel\" , } 10 1700000000000\n"
      "usercopy_cpu_samples_total{callsite=\"a\\\\b\\\"c\\nd\",syscall=\"\",step=\"entry\"}3\n"
      "some_gauge +Inf\n"
      "other_family{x=\"NaN\"} NaN\n"
      "\n# a comment with \xff bytes\n");
  ASSERT_EQ(s.cpu_samples_size(), 1);
  EXPECT_EQ(s.cpu_samples(0).callsite(), "a\\b\"c\nd");
  EXPECT_EQ(s.cpu_samples(0).samples(), 3u);
  EXPECT_EQ(s.sampled(0).samples(), 10u);
}

// Labels beyond those read (a proxy's instance, a later version's) are summed over, as
// `sum by (callsite, syscall, step)` would.
TEST(MetricsSnapshot, SumsOverLabelsItDoesNotRead) {
  const auto s = read_ok(
      "usercopy_sampled_cpu_samples_total{context=\"kernel\"} 1\n"
      "usercopy_cpu_samples_total{callsite=\"a\",syscall=\"read\",step=\"entry\",cpu=\"0\"} 3\n"
      "usercopy_cpu_samples_total{cpu=\"1\",step=\"entry\",syscall=\"read\",callsite=\"a\"} 4\n");
  ASSERT_EQ(s.cpu_samples_size(), 1);
  EXPECT_EQ(s.cpu_samples(0).samples(), 7u);
}

// The checks' total as the daemon counts it (call sites no longer named included), and for a
// daemon without that counter the sum of the named series.
TEST(MetricsSnapshot, TheChecksTotalIsTheDaemonsOrTheNamedSeriesSum) {
  EXPECT_EQ(read_ok(kPage).check_samples(), 46u);
  EXPECT_EQ(read_ok(std::string(kPage) + "usercopy_checks_cpu_samples_total 50\n").check_samples(),
            50u);
}

TEST(MetricsSnapshot, ACountIsAWholeNumber) {
  const std::string head = "usercopy_sampled_cpu_samples_total{context=\"kernel\"} ";
  EXPECT_EQ(read_error(head + "NaN\n"),
            "line 1: usercopy_sampled_cpu_samples_total: NaN is not a count");
  for (const char* value : {"-1", "1.5", "+Inf", "-Inf", "1e300", "9007199254740994"}) {
    EXPECT_THAT(read_error(head + value + "\n"), HasSubstr("a whole number from 0 to 2^53"))
        << value;
  }
  EXPECT_EQ(read_ok(head + "9007199254740992\n").sampled(0).samples(), 9007199254740992u);
  EXPECT_EQ(read_ok(head + "1e3\n").sampled(0).samples(), 1000u);
}

TEST(MetricsSnapshot, MissingLabelsAndRepeatedSeriesAreRefused) {
  EXPECT_EQ(read_error("usercopy_cpu_samples_total{callsite=\"a\",step=\"entry\"} 1\n"),
            "line 1: usercopy_cpu_samples_total: the label syscall is missing");
  EXPECT_EQ(read_error("usercopy_sampled_cpu_samples_total 1\n"),
            "line 1: usercopy_sampled_cpu_samples_total: the label context is missing");
  EXPECT_EQ(read_error("usercopy_sampled_cpu_samples_total{context=\"user\"} 1\n"
                       "usercopy_sampled_cpu_samples_total{context=\"user\"} 2\n"),
            "line 2: usercopy_sampled_cpu_samples_total: a series is given twice");
  EXPECT_EQ(
      read_error("usercopy_sampled_cpu_samples_total{context=\"user\",context=\"kernel\"} 1\n"),
      "line 1: usercopy_sampled_cpu_samples_total: a label is given twice");
}

// Whatever a hostile page holds, the message names the line and the family (one of ours), never
// its bytes: nothing of it reaches the terminal.
TEST(MetricsSnapshot, BrokenLinesAreNamedWithoutTheirBytes) {
  const std::string escape = "\x1b]0;owned\x07\x1b[2J";
  for (const std::string& line : std::vector<std::string>{
           "usercopy_sampled_cpu_samples_total{context=\"" + escape + "} 1",
           "usercopy_sampled_cpu_samples_total{context=\"a\\q\"} 1",
           "usercopy_sampled_cpu_samples_total{context=\"a\" 1",
           "usercopy_sampled_cpu_samples_total{" + escape + "=\"a\"} 1",
           "usercopy_sampled_cpu_samples_total{context=\"a\"} " + escape,
           "usercopy_sampled_cpu_samples_total{context=\"a\"} 1 " + escape,
           "usercopy_sampled_cpu_samples_total{context=\"a\"} 1 2 3",
           "usercopy_sampled_cpu_samples_total{context=\"a\"}",
           "usercopy_sampled_cpu_samples_total\t",
           "usercopy_sampled_cpu_samples_total" + escape + " 1",
       }) {
    const std::string error = read_error("# fine\n" + line + "\n");
    EXPECT_THAT(error, ::testing::StartsWith("line 2: usercopy_sampled_cpu_samples_total: "))
        << line;
    for (const char c : error) {
      EXPECT_TRUE(static_cast<unsigned char>(c) >= 0x20 && c != 0x7f) << error;
    }
  }
}

// Bounds: a label value of 4 KiB and 32 labels at most; a 16 MiB line of another family costs a
// scan, not a failure; a page of no hucprof daemon is said to be one.
TEST(MetricsSnapshot, HugeLinesAndForeignPagesAreBounded) {
  const std::string long_value(kMaxLabelValueBytes + 1, 'x');
  EXPECT_THAT(read_error("usercopy_sampled_cpu_samples_total{context=\"" + long_value + "\"} 1\n"),
              HasSubstr("a label value is longer than 4096 bytes"));
  std::string many = "usercopy_sampled_cpu_samples_total{context=\"k\"";
  for (size_t i = 0; i < kMaxMetricLabels; ++i) many += ",l" + std::to_string(i) + "=\"v\"";
  EXPECT_THAT(read_error(many + "} 1\n"), HasSubstr("more than 32 labels"));

  const std::string huge = "node_foo{x=\"" + std::string(size_t{16} << 20, 'y') + "\"} 1\n";
  EXPECT_EQ(read_ok(huge + "usercopy_sampled_cpu_samples_total{context=\"kernel\"} 5\n")
                .sampled(0)
                .samples(),
            5u);
  EXPECT_EQ(read_error("node_cpu_seconds_total{cpu=\"0\",mode=\"idle\"} 1\n<html>\n"),
            "no hucprof counters: neither usercopy_sampled_cpu_samples_total nor "
            "hucprof_probe_attached is on the page");
  EXPECT_THAT(read_error(""), HasSubstr("no hucprof counters"));
  EXPECT_THAT(read_error(std::string("\0\0\0", 3)), HasSubstr("no hucprof counters"));
}

// A probe-only daemon says what is attached; a page whose probes are all "none" is read too.
TEST(MetricsSnapshot, ProbeStatusAlone) {
  const auto s = read_ok(
      "hucprof_probe_attached{target=\"__check_object_size\",mode=\"fentry\"} 1\n"
      "hucprof_probe_attached{target=\"find_vmap_area\",mode=\"none\"} 0\n"
      "usercopy_hardened_enabled 0\n");
  ASSERT_EQ(s.probes_size(), 2);
  EXPECT_TRUE(s.probes(0).attached());
  EXPECT_EQ(s.probes(1).mode(), "");
  EXPECT_FALSE(s.hardened_usercopy_enabled());
  EXPECT_EQ(s.sample_frequency_hz(), 0u);
}

}  // namespace
}  // namespace hucprof
