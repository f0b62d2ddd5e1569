// Skipped samples in the outputs: the line the report and the web view print, and the pprof
// comment that carries the count through a file (which the reader takes from untrusted files).
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>

#include "core/cost/usercopy_cost.h"
#include "core/symbols/stack_interner.h"
#include "export/pprof/pprof_reader.h"
#include "export/views/missed_text.h"
#include "export/views/pprof_writer.h"
#include "export/views/report_text.h"
#include "export/views/web_view.h"

namespace hucprof {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

// A sampling profile: 5,467 busy samples and 2,000 idle ones, 9 of the busy ones in a check.
StackProfile sampled_profile(StackInterner& interner) {
  StackProfile p;
  p.sampling = true;
  p.sample_period_ns = 1'000'000;
  p.duration_ns = 10'000'000'000;
  p.sampled_by_context = {{"kernel", 5000}, {"user", 467}, {"idle", 2000}};
  ProfileSample s{interner.stack({interner.frame({"__check_object_size", "", 0, 0}),
                                  interner.frame({"tcp_sendmsg_locked", "", 0x40, 0})}),
                  make_labels({"tcp_sendmsg_locked", "sendto", "object", ""}),
                  {}};
  s.values[kSamples] = 9;
  p.samples = {s};
  return p;
}

constexpr const char* kWhy =
    "the kernel skips the program while another BPF program or a bpf() map operation holds the "
    "CPU; in no share)";

TEST(SkippedSamplesLine, SaysHowManyTheClockOwedAndWhatTheRateIsOf) {
  StackInterner interner;
  StackProfile p = sampled_profile(interner);
  p.skipped_samples = 36;
  EXPECT_EQ(*skipped_samples_line(p),
            std::string("7,467 samples taken (busy and idle); 36 more were owed by the CPU clock "
                        "and never ran the sampler (4.8 per 1,000 owed: ") +
                kWhy);
  p.skipped_samples = 0;
  EXPECT_EQ(*skipped_samples_line(p),
            "7,467 samples taken (busy and idle); none skipped: the sampler ran for every sample "
            "the CPU clock owed");
}

// The sampler counts a target's samples only (never idle ones: idle is no one's), and the skips of
// every CPU: no rate of one against the other.
TEST(SkippedSamplesLine, ARecordingOfATargetGivesNoRate) {
  StackInterner interner;
  StackProfile p = sampled_profile(interner);
  p.sampled_by_context = {{"kernel", 5000}, {"user", 467}};
  p.skipped_samples = 36;
  p.target = "PID 1234";
  EXPECT_EQ(*skipped_samples_line(p),
            std::string("5,467 samples of the target taken; 36 more were owed by the CPU clock "
                        "and never ran the sampler (on every CPU, not only the target's: ") +
                kWhy);
}

TEST(SkippedSamplesLine, NothingWhereTheProfileDoesNotCountThem) {
  StackInterner interner;
  EXPECT_FALSE(skipped_samples_line(sampled_profile(interner)));  // older files
  StackProfile probes;
  probes.probes = true;
  probes.skipped_samples = 3;
  EXPECT_FALSE(skipped_samples_line(probes));
}

TEST(SkippedSamplesLine, TheFileKeepsThemAndTheReportPrintsThemUnderTheHeadline) {
  StackInterner interner;
  StackProfile p = sampled_profile(interner);
  p.skipped_samples = 36;
  auto read = read_pprof(encode_pprof_gzip(p));
  ASSERT_TRUE(read.ok()) << read.error().text;
  EXPECT_EQ(read.value().skipped_samples, 36u);
  const std::string report = render_report(read.value(), summarize_cost(read.value()));
  const size_t line = report.find("36 more were owed by the CPU clock");
  ASSERT_NE(line, std::string::npos) << report;
  // The line right above it is the headline ("... over the profile's 10.0 s; ...").
  const size_t above = report.rfind('\n', report.rfind('\n', line) - 1);
  EXPECT_THAT(report.substr(above + 1, line - above), HasSubstr("over the profile's 10.0 s"))
      << report;

  p.skipped_samples = 0;
  auto none = read_pprof(encode_pprof_gzip(p));
  ASSERT_TRUE(none.ok()) << none.error().text;
  EXPECT_EQ(none.value().skipped_samples, 0u);
  EXPECT_THAT(render_report(none.value(), summarize_cost(none.value())), HasSubstr("none skipped"));

  // A file of an older version, without the comment: no count, and nothing printed.
  p.skipped_samples.reset();
  auto older = read_pprof(encode_pprof_gzip(p));
  ASSERT_TRUE(older.ok()) << older.error().text;
  EXPECT_FALSE(older.value().skipped_samples);
  EXPECT_THAT(render_report(older.value(), summarize_cost(older.value())),
              Not(HasSubstr("samples taken")));
}

std::string error_with_comment(const std::string& comment) {
  StackInterner interner;
  pprof::Profile out = to_pprof(sampled_profile(interner));
  out.add_string_table(comment);
  out.add_comment(out.string_table_size() - 1);
  auto read = read_pprof(out.SerializeAsString());
  return read.ok() ? "(read fine)" : read.error().text;
}

TEST(SkippedSamplesLine, AReaderRefusesACommentThatIsNoCount) {
  EXPECT_EQ(error_with_comment("hucprof.skipped_samples=12"), "(read fine)");
  for (const char* bad :
       {"hucprof.skipped_samples=", "hucprof.skipped_samples=-1", "hucprof.skipped_samples=12x",
        "hucprof.skipped_samples= 12", "hucprof.skipped_samples=99999999999999999999999"}) {
    EXPECT_THAT(error_with_comment(bad), HasSubstr("is not a count")) << bad;
  }
  // Past an int64, alone or repeated: refused as the other counts are.
  EXPECT_THAT(error_with_comment("hucprof.skipped_samples=9223372036854775808"),
              HasSubstr("the skipped runs of its comments add up to more than"));
  StackInterner interner;
  pprof::Profile twice = to_pprof(sampled_profile(interner));
  for (int i = 0; i < 2; ++i) {
    twice.add_string_table("hucprof.skipped_samples=5000000000000000000");
    twice.add_comment(twice.string_table_size() - 1);
  }
  auto read = read_pprof(twice.SerializeAsString());
  ASSERT_FALSE(read.ok());
  EXPECT_THAT(read.error().text, HasSubstr("the skipped runs of its comments add up"));
}

TEST(SkippedSamplesLine, TheWebViewStatesItAsAFact) {
  StackInterner interner;
  WebViewInput in;
  in.window = sampled_profile(interner);
  in.window.skipped_samples = 36;
  in.mode = "sample";
  EXPECT_THAT(render_web_view(in),
              HasSubstr("<tr><th>samples</th><td>7,467 samples taken (busy and idle); 36 more"));
  in.window.skipped_samples.reset();
  EXPECT_THAT(render_web_view(in), Not(HasSubstr("<tr><th>samples</th>")));
}

}  // namespace
}  // namespace hucprof
