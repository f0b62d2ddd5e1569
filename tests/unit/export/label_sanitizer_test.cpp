#include <gtest/gtest.h>

#include "export/label_sanitizer.h"

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

TEST(SanitizeLabelValue, RepairsInvalidUtf8) {
  EXPECT_EQ(sanitize_label_value("a\xff"
                                 "b"),
            "a\xEF\xBF\xBD"
            "b");
  EXPECT_EQ(sanitize_label_value("\xC0\xAF"), "\xEF\xBF\xBD\xEF\xBF\xBD");  // overlong '/'
  EXPECT_EQ(sanitize_label_value("\xED\xA0\x80"),
            "\xEF\xBF\xBD\xEF\xBF\xBD\xEF\xBF\xBD");                        // surrogate
  EXPECT_EQ(sanitize_label_value("\xE2\x82"), "\xEF\xBF\xBD\xEF\xBF\xBD");  // truncated
  EXPECT_EQ(sanitize_label_value("\xF0\x9F\x94\xA5"), "\xF0\x9F\x94\xA5");  // valid 4-byte
}

}  // namespace
}  // namespace hucprof
