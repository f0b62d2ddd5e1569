#include "export/views/sorted_report.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "core/symbols/stack_interner.h"
#include "fixture_profile.h"
#include "text_lines.h"

namespace hucprof {
namespace {

using ::testing::Contains;
using ::testing::HasSubstr;
using ::testing::Not;

// fixture_profile.h: of 1 400 busy samples, 7 at udp_recvmsg (recvfrom; 0.50 %) and 2 at
// netlink_recvmsg (recvmsg; 0.14 %); udp_recvmsg's 1 000 calls of 64 000 bytes.
TEST(SortedReport, RowsByTheKeysLargestFirst) {
  StackInterner interner;
  const std::string text =
      render_sorted_report(fixture_profile(interner), {SortKey::Syscall}, std::nullopt);
  EXPECT_THAT(text, HasSubstr("the checks by syscall (share: of busy CPU"));
  const size_t udp = text.find("recvfrom"), netlink = text.find("recvmsg\n");
  ASSERT_NE(udp, std::string::npos);
  ASSERT_NE(netlink, std::string::npos);
  EXPECT_LT(udp, netlink);
  EXPECT_THAT(text, HasSubstr("0.50 %"));
  EXPECT_THAT(text, HasSubstr("0.14 %"));
  EXPECT_THAT(text, Not(HasSubstr("hidden")));
}

TEST(SortedReport, PercentLimitSaysWhatItHid) {
  StackInterner interner;
  const std::string text =
      render_sorted_report(fixture_profile(interner), {SortKey::Callsite}, 0.3);
  EXPECT_THAT(text, HasSubstr("udp_recvmsg"));
  EXPECT_THAT(text, Not(HasSubstr("netlink_recvmsg")));
  EXPECT_THAT(text_lines(text), Contains("  (1 row below 0.3 % hidden, 0.14 % together)"));
}

TEST(SortedReport, ProbesOnlyGiveTheShareOfCalls) {
  StackInterner interner;
  StackProfile p = fixture_profile(interner);
  p.sampling = false;  // udp_recvmsg's 1 000 calls are all the calls
  const std::string text = render_sorted_report(p, {SortKey::Callsite}, std::nullopt);
  EXPECT_THAT(text, HasSubstr("the checks by callsite (share: of the checks' calls)"));
  bool found = false;
  for (const std::string& line : text_lines(text)) {
    if (!line.ends_with(" udp_recvmsg")) continue;
    found = true;
    EXPECT_THAT(line, HasSubstr("100.0 %"));
    EXPECT_THAT(line, HasSubstr("1.0k"));
    EXPECT_THAT(line, HasSubstr("62.5 KiB"));
  }
  EXPECT_TRUE(found) << text;
  EXPECT_THAT(text, Not(HasSubstr("netlink_recvmsg")));  // samples only, no calls
}

TEST(DiffReport, MarksOnlyChangesBeyondNoise) {
  StackInterner interner;
  const StackProfile current = fixture_profile(interner);
  // Base: ten times the busy CPU (14 000 samples), udp_recvmsg's 7 samples in it (0.05 %),
  // netlink_recvmsg's ten times 2 (0.14 %, as in current).
  StackProfile base = fixture_profile(interner);
  base.sampled_by_context["user"] = 13000;
  ASSERT_EQ(base.samples[3].labels->callsite, "netlink_recvmsg");
  base.samples[3].values[kSamples] = 20;
  const std::string text = render_diff_report(base, "base.pb.gz", current, "current.pb.gz",
                                              {SortKey::Callsite}, std::nullopt);
  const std::vector<std::string> lines = text_lines(text);
  auto line_of = [&](const std::string& callsite) {
    for (const std::string& l : lines) {
      if (l.ends_with(" " + callsite)) return l;
    }
    return std::string();
  };
  EXPECT_THAT(line_of("udp_recvmsg"), HasSubstr("0.05 %"));
  EXPECT_THAT(line_of("udp_recvmsg"), HasSubstr("0.50 %"));
  EXPECT_THAT(line_of("udp_recvmsg"), HasSubstr("+0.45 pp"));
  EXPECT_THAT(line_of("udp_recvmsg"), HasSubstr(" * udp_recvmsg"));
  EXPECT_THAT(line_of("netlink_recvmsg"), HasSubstr("+0.00 pp"));
  EXPECT_THAT(line_of("netlink_recvmsg"), Not(HasSubstr("*")));
  EXPECT_THAT(text, HasSubstr("base: base.pb.gz"));
  EXPECT_THAT(text, HasSubstr("current: current.pb.gz"));
  EXPECT_THAT(text, HasSubstr("Newcombe"));
}

TEST(DiffReport, NoChangeBetweenAProfileAndItself) {
  StackInterner interner;
  const StackProfile p = fixture_profile(interner);
  const std::string text =
      render_diff_report(p, "a", p, "a", {SortKey::Callsite, SortKey::Syscall}, std::nullopt);
  EXPECT_THAT(text, HasSubstr("+0.00 pp"));
  EXPECT_THAT(text, HasSubstr("within noise"));
  EXPECT_THAT(text, Not(HasSubstr(" * ")));
}

}  // namespace
}  // namespace hucprof
