#include <gtest/gtest.h>

#include "core/base/quoted_value.h"
#include "export/metrics/label_sanitizer.h"

namespace hucprof {
namespace {

TEST(SanitizeLabelValue, KeepsOrdinaryValues) {
  for (const char* value : {"udp_recvmsg", "udp_recvmsg+0x1a", "other", "", "to_user",
                            "fentry: EPERM (ftrace locked)", "errno 0xffff", "µs"}) {
    EXPECT_EQ(sanitize_label_value(value), value);
  }
}

TEST(SanitizeLabelValue, RedactsKernelAddresses) {
  EXPECT_EQ(sanitize_label_value("0xffffffff81a2b3c4"), "[kernel address]");
  EXPECT_EQ(sanitize_label_value("ffffffffc0123456"), "[kernel address]");
  EXPECT_EQ(sanitize_label_value("0XFFFF888100000000"), "[kernel address]");
  EXPECT_EQ(sanitize_label_value("ffff88810000000"), "[kernel address]");  // 15 digits
  EXPECT_EQ(sanitize_label_value("at ffffffff81000000+0x10 and 0xffffffff81000020."),
            "at [kernel address]+0x10 and [kernel address].");
}

TEST(SanitizeLabelValue, LeavesOtherHexAlone) {
  EXPECT_EQ(sanitize_label_value("0xffffffff"), "0xffffffff");                      // 32-bit value
  EXPECT_EQ(sanitize_label_value("deadbeefffffffff1234"), "deadbeefffffffff1234");  // 20 digits
  EXPECT_EQ(sanitize_label_value("1234ffffffffffff"), "1234ffffffffffff");          // not top half
}

// A label value is printable_name: what a terminal shows of `curl /metrics` is text, and
// Prometheus takes it (valid UTF-8). Bytes that are not UTF-8 and control characters read \xNN,
// as in the report, the logs and the web view.
TEST(SanitizeLabelValue, EscapesBytesThatAreNotUtf8AndControlCharacters) {
  EXPECT_EQ(sanitize_label_value("a\xff"
                                 "b"),
            "a\\xffb");
  EXPECT_EQ(sanitize_label_value("\xC0\xAF"), "\\xc0\\xaf");                // overlong '/'
  EXPECT_EQ(sanitize_label_value("\xED\xA0\x80"), "\\xed\\xa0\\x80");       // surrogate
  EXPECT_EQ(sanitize_label_value("\xE2\x82"), "\\xe2\\x82");                // truncated
  EXPECT_EQ(sanitize_label_value("\xF0\x9F\x94\xA5"), "\xF0\x9F\x94\xA5");  // valid 4-byte
  EXPECT_EQ(sanitize_label_value("pod\x1b]0;x\x07"), "pod\\x1b]0;x\\x07");
}

TEST(SanitizeLabelValue, IsBounded) {
  const std::string value = sanitize_label_value(std::string(100'000, 'x'));
  EXPECT_EQ(value.size(), kMaxNameBytes);
  EXPECT_TRUE(value.ends_with("…"));
}

}  // namespace
}  // namespace hucprof
