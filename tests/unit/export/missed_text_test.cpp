#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "core/cost/usercopy_cost.h"
#include "core/symbols/stack_interner.h"
#include "export/pprof/pprof_reader.h"
#include "export/views/missed_text.h"
#include "export/views/pprof_writer.h"
#include "export/views/report_text.h"

namespace hucprof {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

// A probe-mode profile: 28,330 calls at one call site.
StackProfile probe_profile(StackInterner& interner) {
  StackProfile p;
  p.probes = true;
  p.duration_ns = 10'000'000'000;
  ProfileSample s{interner.stack({interner.frame({"__check_object_size", "", 0, 0}),
                                  interner.frame({"tcp_sendmsg_locked", "", 0x40, 0})}),
                  make_labels({"tcp_sendmsg_locked", "sendto", "", "from_user"}),
                  {}};
  s.values[kCalls] = 28330;
  s.values[kBytes] = 28330 * 100;
  p.samples = {s};
  return p;
}

TEST(MissedChecksLine, SaysHowManyTheKernelSkippedBesideTheExactCount) {
  StackInterner interner;
  StackProfile p = probe_profile(interner);
  p.missed_checks = {{"recursion", 36}};
  EXPECT_EQ(*missed_checks_line(p, summarize_cost(p)),
            "28,330 checks counted exactly; 36 ran while the program was busy on their CPU and "
            "were not counted (127 per 100,000: the kernel skipped the check's program and only "
            "counted them)");
  p.missed_checks = {{"recursion", 0}, {"kprobe_missed", 0}};
  EXPECT_EQ(*missed_checks_line(p, summarize_cost(p)),
            "28,330 checks counted exactly; none ran while the program was busy on their CPU");
}

TEST(MissedChecksLine, AKernelThatCountsNoneSaysWhyInsteadOfAZero) {
  StackInterner interner;
  StackProfile p = probe_profile(interner);
  p.missed_checks_uncounted = "not before 6.7";
  EXPECT_EQ(*missed_checks_line(p, summarize_cost(p)),
            "28,330 checks counted exactly; how many ran while the program was busy on their CPU "
            "is unknown here: not before 6.7");
  // Sampling only (no probes): nothing to say.
  StackProfile sampled;
  sampled.sampling = true;
  EXPECT_FALSE(missed_checks_line(sampled, summarize_cost(sampled)));
}

TEST(MissedChecksLine, TheRecordingKeepsThemAndTheReportPrintsThem) {
  StackInterner interner;
  StackProfile p = probe_profile(interner);
  p.missed_checks = {{"recursion", 36}, {"kprobe_missed", 2}};
  auto read = read_pprof(encode_pprof_gzip(p));
  ASSERT_TRUE(read.ok()) << read.error().text;
  EXPECT_EQ(read.value().missed_checks, p.missed_checks);
  EXPECT_THAT(render_report(read.value(), summarize_cost(read.value())),
              HasSubstr("28,330 checks counted exactly; 38 ran while the program was busy"));

  StackProfile uncounted = probe_profile(interner);
  uncounted.missed_checks_uncounted = "this kernel counts neither";
  auto back = read_pprof(encode_pprof_gzip(uncounted));
  ASSERT_TRUE(back.ok()) << back.error().text;
  EXPECT_TRUE(back.value().missed_checks.empty());
  EXPECT_EQ(back.value().missed_checks_uncounted, "this kernel counts neither");
  EXPECT_THAT(render_report(back.value(), summarize_cost(back.value())),
              Not(HasSubstr("none ran while")));
}

}  // namespace
}  // namespace hucprof
