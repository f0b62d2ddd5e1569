// `hucprof record` and `hucprof report` on the command line.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "parse_helpers.h"

namespace hucprof {
namespace {

using std::chrono::milliseconds;
using ::testing::ElementsAre;
using ::testing::HasSubstr;

Command parse_ok(std::vector<std::string> words) {
  const ParseOutcome outcome = parse(std::move(words));
  if (!outcome.command) {
    ADD_FAILURE() << "exit " << outcome.exit_code << ": " << outcome.message;
    return {};
  }
  return *outcome.command;
}

TEST(RecordOptions, Defaults) {
  const Command c = parse_ok({"record"});
  EXPECT_EQ(c.kind, CommandKind::Record);
  EXPECT_FALSE(c.record.duration.has_value());
  EXPECT_EQ(c.record.output, "usercopy.pb.gz");
  EXPECT_TRUE(c.record.command.empty());
  EXPECT_EQ(c.run.attach.mode, Mode::Auto);
}

TEST(RecordOptions, TakesTheRunSettingsThatApplyAndItsOwn) {
  const Command c = parse_ok({"record", "--mode", "sample", "--sample-frequency", "499",
                              "--duration", "1m30s", "-o", "/tmp/x.pb.gz", "--latency"});
  EXPECT_EQ(c.run.attach.mode, Mode::Sample);
  EXPECT_EQ(c.run.sample_frequency, 499u);
  EXPECT_TRUE(c.run.attach.latency);
  EXPECT_EQ(c.record.duration, milliseconds(90'000));
  EXPECT_EQ(c.record.output, "/tmp/x.pb.gz");
  EXPECT_EQ(parse_ok({"record", "--output=a.pb.gz"}).record.output, "a.pb.gz");
  const Command sized = parse_ok({"record", "--bpf.max-stacks", "1024", "--log.format", "json"});
  EXPECT_EQ(sized.run.attach.max_stacks, 1024u);
  EXPECT_EQ(sized.run.log_format, LogFormat::Json);
}

TEST(RecordOptions, EverythingAfterDashesIsTheCommandUntouched) {
  const Command c = parse_ok(
      {"record", "--duration", "5s", "--", "iperf3", "-c", "10.0.0.1", "--udp", "--", "x"});
  EXPECT_THAT(c.record.command, ElementsAre("iperf3", "-c", "10.0.0.1", "--udp", "--", "x"));
  EXPECT_EQ(c.record.duration, milliseconds(5000));
}

TEST(RecordOptions, ServerFlagsAndBadValuesAreRefusedByName) {
  EXPECT_EQ(parse_error({"record", "--web.listen-address", ":1"}),
            "unknown flag --web.listen-address");
  EXPECT_EQ(parse_error({"record", "--top-k", "3"}), "unknown flag --top-k");
  EXPECT_EQ(parse_error({"record", "--web.config.file", "w.yml"}),
            "unknown flag --web.config.file");
  // Nothing is dropped: COMMAND runs with the privileges record was given.
  EXPECT_EQ(parse_error({"record", "--capabilities.keep", "none"}),
            "unknown flag --capabilities.keep");
  EXPECT_THAT(parse_error({"record", "--duration", "soon"}), HasSubstr("--duration: "));
  EXPECT_EQ(parse_error({"record", "--duration", "500ms"}),
            "--duration: \"500ms\" is below the minimum of 1s");
  EXPECT_EQ(parse_error({"record", "-o", ""}), "--output: empty path");
  EXPECT_EQ(parse_error({"record", "--sample-frequency", "0"}),
            "--sample-frequency: 0 is out of range 1..1000");
}

TEST(RecordOptions, DashesBelongToRecordOnly) {
  EXPECT_THAT(parse_error({"run", "--", "ls"}), HasSubstr("only `hucprof record -- COMMAND`"));
}

TEST(ReportOptions, FileAndFlameGraph) {
  const Command c = parse_ok({"report", "--flamegraph", "out.svg", "usercopy.pb.gz"});
  EXPECT_EQ(c.kind, CommandKind::Report);
  EXPECT_EQ(c.report.input, "usercopy.pb.gz");
  EXPECT_EQ(c.report.flamegraph, "out.svg");
  EXPECT_FALSE(parse_ok({"report", "p.pb.gz"}).report.flamegraph.has_value());
}

TEST(ReportOptions, WithoutAFileReadsWhatRecordWrites) {
  // Like `perf report` reads perf.data: the file `hucprof record` writes by default.
  EXPECT_EQ(parse_ok({"report"}).report.input, "usercopy.pb.gz");
  EXPECT_EQ(parse_ok({"report"}).report.input, parse_ok({"record"}).record.output);
  EXPECT_EQ(parse_ok({"report", "--flamegraph", "f.svg"}).report.input, "usercopy.pb.gz");
}

TEST(RecordOptions, DashFIsPerfsSampleFrequency) {
  EXPECT_EQ(parse_ok({"record", "-F", "499"}).run.sample_frequency, 499u);
  EXPECT_EQ(parse_ok({"record", "-F499"}).run.sample_frequency, 499u);
  EXPECT_EQ(parse_error({"record", "-F", "0"}), "--sample-frequency: 0 is out of range 1..1000");
  // run keeps its long flags only: -F there is not perf's.
  EXPECT_EQ(parse_error({"run", "-F", "99"}), "unknown flag -F");
}

TEST(ReportOptions, EmptyFileAndUnknownFlags) {
  EXPECT_THAT(parse_error({"report", ""}), HasSubstr("report: empty FILE"));
  EXPECT_EQ(parse_error({"report", "--mode", "probe", "x"}), "unknown flag --mode");
  EXPECT_EQ(parse_error({"report", "a", "b"}), "unexpected argument \"b\"");
}

TEST(ReportOptions, SortPercentLimitFoldedAndDiff) {
  const Command c = parse_ok(
      {"report", "--sort", "workload,callsite", "--percent-limit", "0.5", "--diff", "b.pb.gz"});
  EXPECT_EQ(c.report.sort, (std::vector<SortKey>{SortKey::Workload, SortKey::Callsite}));
  EXPECT_EQ(c.report.percent_limit, 0.5);
  EXPECT_EQ(c.report.diff, "b.pb.gz");
  EXPECT_FALSE(c.report.folded);
  EXPECT_TRUE(parse_ok({"report", "--folded", "x.pb.gz"}).report.folded);
  // Without them, the report as it was.
  const Command plain = parse_ok({"report"});
  EXPECT_FALSE(plain.report.sort || plain.report.percent_limit || plain.report.diff ||
               plain.report.folded);
}

TEST(ReportOptions, BadSortPercentAndCombinationsInOneLine) {
  EXPECT_EQ(
      parse_error({"report", "--sort", "dso"}),
      "--sort: unknown key \"dso\" (keys: callsite, syscall, copy, step, workload, comm, pid)");
  EXPECT_THAT(parse_error({"report", "--sort", "step,step"}), HasSubstr("given twice"));
  for (const char* pct : {"-1", "100.5", "x", "", "nan", "5%"}) {
    EXPECT_THAT(parse_error({"report", "--percent-limit", pct}),
                HasSubstr("is not a percentage from 0 to 100"))
        << pct;
  }
  EXPECT_THAT(parse_error({"report", "--folded", "--sort", "callsite"}),
              HasSubstr("--folded: prints stacks, not a table"));
  EXPECT_EQ(parse_error({"report", "--diff", ""}), "--diff: empty path");
}

}  // namespace
}  // namespace hucprof
