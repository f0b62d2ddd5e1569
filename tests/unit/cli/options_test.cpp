#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "parse_helpers.h"

namespace hucprof {
namespace {

using std::chrono::milliseconds;
using ::testing::HasSubstr;
using ::testing::Not;
using ::testing::StartsWith;

TEST(Options, RunDefaults) {
  const ParseOutcome outcome = parse({"run"});
  ASSERT_TRUE(outcome.command.has_value()) << outcome.message;
  EXPECT_EQ(outcome.exit_code, 0);
  EXPECT_EQ(outcome.command->kind, CommandKind::Run);
  const RunOptions& o = outcome.command->run;
  EXPECT_EQ(o.attach.mode, Mode::Auto);
  EXPECT_EQ(o.listen_addresses, std::vector<std::string>{":9478"});
  EXPECT_EQ(o.sample_frequency, 99u);
  EXPECT_EQ(o.interval, milliseconds(10'000));
  EXPECT_EQ(o.top_k, 20u);
  EXPECT_FALSE(o.attach.latency);
  EXPECT_EQ(o.attach.probe_attach, ProbeAttach::Auto);
  EXPECT_EQ(o.log_level, "info");
  EXPECT_EQ(o.log_format, LogFormat::Text);
  EXPECT_FALSE(o.config_path.has_value());  // no --config: no file is read at all
  EXPECT_EQ(o.kallsyms_path, "/proc/kallsyms");
}

TEST(Options, EachRunFlag) {
  EXPECT_EQ(parse_run({"run", "--mode", "probe"}).attach.mode, Mode::Probe);
  EXPECT_EQ(parse_run({"run", "--mode=sample"}).attach.mode, Mode::Sample);
  EXPECT_EQ(parse_run({"run", "--mode", "auto"}).attach.mode, Mode::Auto);
  EXPECT_EQ(parse_run({"run", "--web.listen-address", "127.0.0.1:9100"}).listen_addresses,
            std::vector<std::string>{"127.0.0.1:9100"});
  EXPECT_EQ(parse_run({"run", "--web.listen-address=[::1]:9478"}).listen_addresses,
            std::vector<std::string>{"[::1]:9478"});
  EXPECT_EQ(parse_run({"run", "--sample-frequency", "1"}).sample_frequency, 1u);
  EXPECT_EQ(parse_run({"run", "--sample-frequency", "1000"}).sample_frequency, 1000u);
  EXPECT_EQ(parse_run({"run", "--interval", "500ms"}).interval, milliseconds(500));
  EXPECT_EQ(parse_run({"run", "--interval", "1m30s"}).interval, milliseconds(90'000));
  EXPECT_EQ(parse_run({"run", "--interval", "100ms"}).interval, milliseconds(100));
  EXPECT_EQ(parse_run({"run", "--top-k", "1"}).top_k, 1u);
  EXPECT_EQ(parse_run({"run", "--top-k", "1000"}).top_k, 1000u);
  EXPECT_TRUE(parse_run({"run", "--latency"}).attach.latency);
  EXPECT_EQ(parse_run({"run", "--probe.attach", "kprobe"}).attach.probe_attach,
            ProbeAttach::Kprobe);
  EXPECT_EQ(parse_run({"run", "--probe.attach", "fentry"}).attach.probe_attach,
            ProbeAttach::Fentry);
  if (kCanClassifySubchecks) {
    EXPECT_EQ(parse_run({"run", "--probe.subchecks", "classify"}).attach.subchecks,
              SubcheckCounting::Classify);
    EXPECT_EQ(parse_run({"run"}).attach.subchecks, SubcheckCounting::Classify);
  } else {
    EXPECT_EQ(parse_run({"run"}).attach.subchecks, SubcheckCounting::Attach);
  }
  EXPECT_EQ(parse_run({"run", "--probe.subchecks", "attach"}).attach.subchecks,
            SubcheckCounting::Attach);
  EXPECT_TRUE(parse_run({"run"}).attach.rescue);
  EXPECT_FALSE(parse_run({"run"}).attach.objects);
  EXPECT_TRUE(parse_run({"run", "--probe.objects"}).attach.objects);
  EXPECT_TRUE(parse_run({"run", "--probe.rescue", "auto"}).attach.rescue);
  EXPECT_FALSE(parse_run({"run", "--probe.rescue", "off"}).attach.rescue);
  for (const char* level : {"debug", "info", "warn", "error"}) {
    EXPECT_EQ(parse_run({"run", "--log.level", level}).log_level, level);
  }
  EXPECT_EQ(parse_run({"run", "--log.format", "logfmt"}).log_format, LogFormat::Logfmt);
  EXPECT_EQ(parse_run({"run", "--log.format=json"}).log_format, LogFormat::Json);
  EXPECT_EQ(parse_run({"doctor", "--log.format", "json"}).log_format, LogFormat::Json);
  EXPECT_EQ(parse_run({"run", "--kallsyms", "/tmp/fake-kallsyms"}).kallsyms_path,
            "/tmp/fake-kallsyms");
}

TEST(Options, DoctorTakesModeAttachLogLevelConfigAndKallsyms) {
  const ParseOutcome outcome =
      parse({"doctor", "--mode", "sample", "--probe.attach", "kprobe", "--kallsyms", "/x"});
  ASSERT_TRUE(outcome.command.has_value()) << outcome.message;
  EXPECT_EQ(outcome.command->kind, CommandKind::Doctor);
  EXPECT_EQ(outcome.command->run.attach.mode, Mode::Sample);
  EXPECT_EQ(outcome.command->run.attach.probe_attach, ProbeAttach::Kprobe);
  EXPECT_EQ(outcome.command->run.kallsyms_path, "/x");
  EXPECT_EQ(parse_run({"doctor", "--log.level", "debug"}).log_level, "debug");
  // Run-only flags are not doctor's.
  EXPECT_EQ(parse_error({"doctor", "--top-k", "5"}), "unknown flag --top-k");
}

TEST(Options, Version) {
  for (const auto& words : std::vector<std::vector<std::string>>{{"version"}, {"--version"}}) {
    const ParseOutcome outcome = parse(words);
    ASSERT_TRUE(outcome.command.has_value()) << outcome.message;
    EXPECT_EQ(outcome.command->kind, CommandKind::Version);
  }
  EXPECT_EQ(parse_error({"version", "--mode", "probe"}), "unknown flag --mode");
}

TEST(Options, HelpAnywhereExitsZeroWithHelpText) {
  const ParseOutcome top = parse({"--help"});
  EXPECT_FALSE(top.command.has_value());
  EXPECT_EQ(top.exit_code, 0);
  EXPECT_THAT(top.message, HasSubstr("run"));
  EXPECT_THAT(top.message, HasSubstr("doctor"));
  EXPECT_THAT(top.message, HasSubstr("version"));

  const ParseOutcome run = parse({"run", "--help"});
  EXPECT_FALSE(run.command.has_value());
  EXPECT_EQ(run.exit_code, 0);
  for (const char* flag :
       {"--mode", "--web.listen-address", "--sample-frequency", "--interval", "--top-k",
        "--latency", "--probe.attach", "--log.level", "--log.format", "--config"}) {
    EXPECT_THAT(run.message, HasSubstr(flag));
  }
  EXPECT_THAT(run.message, HasSubstr(":9478"));  // defaults are shown
  EXPECT_THAT(run.message, HasSubstr("10s"));
  EXPECT_THAT(run.message, Not(HasSubstr("--kallsyms")));  // for tests, not operators
  EXPECT_NE(run.message.back(), '\n');

  // --help wins over whatever else is on the line, even bad values.
  for (const auto& words : std::vector<std::vector<std::string>>{{"run", "--top-k", "0", "--help"},
                                                                 {"-h"},
                                                                 {"doctor", "-h"},
                                                                 {"run", "--bogus", "--help"}}) {
    const ParseOutcome outcome = parse(words);
    EXPECT_FALSE(outcome.command.has_value());
    EXPECT_EQ(outcome.exit_code, 0) << outcome.message;
    EXPECT_THAT(outcome.message, HasSubstr("--help"));
  }
  EXPECT_THAT(parse({"doctor", "--help"}).message, Not(HasSubstr("--top-k")));
}

TEST(Options, NoCommandIsAUsageError) {
  EXPECT_THAT(parse_error({}),
              StartsWith("missing command; usage: hucprof run|doctor|record|report|top|version"));
  EXPECT_THAT(parse_error({"frob"}), StartsWith("unknown command \"frob\"; usage: hucprof"));
}

TEST(Options, BadFlagValuesNameTheFlag) {
  EXPECT_EQ(parse_error({"run", "--sample-frequency", "0"}),
            "--sample-frequency: 0 is out of range 1..1000");
  EXPECT_EQ(parse_error({"run", "--sample-frequency", "1001"}),
            "--sample-frequency: 1001 is out of range 1..1000");
  EXPECT_EQ(parse_error({"run", "--sample-frequency", "99999999999999999999999"}),
            "--sample-frequency: 99999999999999999999999 is out of range 1..1000");
  EXPECT_EQ(parse_error({"run", "--sample-frequency", "fast"}),
            "--sample-frequency: \"fast\" is not a whole number");
  EXPECT_EQ(parse_error({"run", "--sample-frequency=-5"}),
            "--sample-frequency: \"-5\" is not a whole number");
  EXPECT_EQ(parse_error({"run", "--top-k", "0"}), "--top-k: 0 is out of range 1..1000");
  EXPECT_EQ(parse_error({"run", "--top-k", "2.5"}), "--top-k: \"2.5\" is not a whole number");
  EXPECT_EQ(parse_error({"run", "--interval", "50ms"}),
            "--interval: \"50ms\" is out of range 100ms..1h");
  // Accepted before: the maps would have held 114 years of keys before a drain.
  EXPECT_EQ(parse_error({"run", "--interval", "1000000h"}),
            "--interval: \"1000000h\" is out of range 100ms..1h");
  EXPECT_EQ(parse_error({"run", "--interval", "61m"}),
            "--interval: \"61m\" is out of range 100ms..1h");
  EXPECT_EQ(parse_error({"run", "--interval", "10"}),
            "--interval: \"10\" has no unit (use ms, s, m or h, e.g. 10s)");
  EXPECT_EQ(parse_error({"run", "--interval", "soon"}),
            "--interval: \"soon\" is not a duration (e.g. 10s, 500ms, 1m30s)");
  EXPECT_EQ(parse_error({"run", "--mode", "fast"}),
            "--mode: \"fast\" is not one of auto, probe, sample");
  EXPECT_EQ(parse_error({"run", "--probe.attach", "uprobe"}),
            "--probe.attach: \"uprobe\" is not one of auto, fentry, kprobe");
  EXPECT_EQ(parse_error({"run", "--probe.rescue", "on"}),
            "--probe.rescue: \"on\" is not one of auto, off");
  EXPECT_EQ(parse_error({"run", "--probe.subchecks", "guess"}),
            "--probe.subchecks: \"guess\" is not one of attach, classify");
  EXPECT_EQ(parse_error({"run", "--log.level", "verbose"}),
            "--log.level: \"verbose\" is not one of debug, info, warn, error");
  // What the user typed is quoted back on one line, control characters made visible
  // (fuzz_command_line found the newline).
  EXPECT_EQ(parse_error({"run", "--mode", "pro\nbe\x1b[0m"}),
            "--mode: \"pro\\nbe\\x1b[0m\" is not one of auto, probe, sample");
  EXPECT_EQ(parse_error({"run", "--log.format", "JSON"}),
            "--log.format: \"JSON\" is not one of text, logfmt, json");
  EXPECT_THAT(parse_error({"run", "--web.listen-address", ""}),
              StartsWith("--web.listen-address: empty address"));
  EXPECT_EQ(parse_error({"run", "--kallsyms", ""}), "--kallsyms: empty path");
}

TEST(Options, MissingValueNamesTheFlag) {
  EXPECT_EQ(parse_error({"run", "--mode"}), "--mode: missing value");
  EXPECT_EQ(parse_error({"run", "--config"}), "--config: missing value");
  EXPECT_EQ(parse_error({"doctor", "--kallsyms"}), "--kallsyms: missing value");
}

TEST(Options, LatencySwitchTakesAnExplicitValue) {
  EXPECT_TRUE(parse_run({"run", "--latency=true"}).attach.latency);
  EXPECT_FALSE(parse_run({"run", "--latency=false"}).attach.latency);
}

TEST(Options, UnknownFlagsAndArgumentsAreNamed) {
  EXPECT_EQ(parse_error({"run", "--intervall", "5s"}), "unknown flag --intervall");
  EXPECT_EQ(parse_error({"run", "--intervall=5s"}), "unknown flag --intervall");
  EXPECT_EQ(parse_error({"run", "-x"}), "unknown flag -x");
  EXPECT_EQ(parse_error({"run", "extra"}), "unexpected argument \"extra\"");
  EXPECT_EQ(parse_error({"--mode", "probe", "run"}), "unknown flag --mode");
}

TEST(Options, ModeNames) {
  EXPECT_STREQ(mode_name(Mode::Auto), "auto");
  EXPECT_STREQ(mode_name(Mode::Probe), "probe");
  EXPECT_STREQ(mode_name(Mode::Sample), "sample");
}

}  // namespace
}  // namespace hucprof
