// `hucprof top` on the command line.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "parse_helpers.h"

namespace hucprof {
namespace {

using std::chrono::milliseconds;
using ::testing::HasSubstr;

Command parse_top(std::vector<std::string> words) {
  words.insert(words.begin(), "top");
  const ParseOutcome outcome = parse(std::move(words));
  if (!outcome.command) {
    ADD_FAILURE() << "exit " << outcome.exit_code << ": " << outcome.message;
    return {};
  }
  EXPECT_EQ(outcome.command->kind, CommandKind::Top);
  return *outcome.command;
}

TEST(TopOptions, Defaults) {
  const Command c = parse_top({});
  EXPECT_FALSE(c.top.from);
  EXPECT_EQ(c.top.delay, milliseconds(1000));
  EXPECT_FALSE(c.top.iterations);
  EXPECT_FALSE(c.top.cumulative);
  EXPECT_EQ(c.run.attach.mode, Mode::Auto);
}

// -d as top takes it (seconds, a bare number) and as hucprof's durations; -n; -S.
TEST(TopOptions, DelayIterationsAndCumulativeAsTopHasThem) {
  EXPECT_EQ(parse_top({"-d", "2"}).top.delay, milliseconds(2000));
  EXPECT_EQ(parse_top({"-d", "0.5"}).top.delay, milliseconds(500));
  EXPECT_EQ(parse_top({"--delay", "250ms"}).top.delay, milliseconds(250));
  EXPECT_EQ(parse_top({"-n", "3"}).top.iterations, 3u);
  EXPECT_EQ(parse_top({"--iterations=7"}).top.iterations, 7u);
  EXPECT_TRUE(parse_top({"-S"}).top.cumulative);
  EXPECT_TRUE(parse_top({"--cumulative"}).top.cumulative);
  EXPECT_THAT(parse_error({"top", "-d", "0.05"}), HasSubstr("--delay: "));
  EXPECT_THAT(parse_error({"top", "-d", "2h"}), HasSubstr("--delay: "));
  EXPECT_THAT(parse_error({"top", "-d", "x"}), HasSubstr("--delay: "));
  // Said as typed, not as the duration made of it.
  EXPECT_THAT(parse_error({"top", "-d", "0"}), HasSubstr("--delay: \"0\" is out of range"));
  EXPECT_EQ(parse_error({"top", "-n", "0"}),
            "--iterations: \"0\" is not a whole number in 1..1000000000");
  EXPECT_THAT(parse_error({"top", "-n", "-1"}), HasSubstr("--iterations"));
  EXPECT_THAT(parse_error({"top", "-n", "1e3"}), HasSubstr("--iterations"));
}

// Its own programs take record's settings (and -F), but not --interval: the drains follow -d.
TEST(TopOptions, ItsOwnProgramsTakeRecordsSettings) {
  const Command c = parse_top({"--mode", "sample", "-F", "499", "--log.level", "warn"});
  EXPECT_EQ(c.run.attach.mode, Mode::Sample);
  EXPECT_EQ(c.run.sample_frequency, 499u);
  EXPECT_EQ(parse_error({"top", "--interval", "1s"}), "unknown flag --interval");
  EXPECT_EQ(parse_error({"top", "--web.listen-address", ":1"}),
            "unknown flag --web.listen-address");
  EXPECT_EQ(parse_error({"top", "extra"}), "unexpected argument \"extra\"");
}

TEST(TopOptions, FromADaemon) {
  const Command c = parse_top({"--from", "http://127.0.0.1:9478", "--log.format", "json"});
  EXPECT_EQ(c.top.from, "http://127.0.0.1:9478");
  EXPECT_EQ(c.run.log_format, LogFormat::Json);
  EXPECT_EQ(parse_top({"--from", "https://n:1", "--from.ca-file", "/ca.pem"}).top.from_ca_file,
            "/ca.pem");
  EXPECT_THAT(parse_error({"top", "--from", "127.0.0.1:9478"}), HasSubstr("--from: "));
  EXPECT_THAT(parse_error({"top", "--from", "http://a:b@n:1"}), HasSubstr("HUCPROF_FROM_PASSWORD"));
  EXPECT_EQ(parse_error({"top", "--from", "http://n:1", "--from.ca-file", "/ca.pem"}),
            "--from.ca-file: only with an https --from");
  EXPECT_EQ(parse_error({"top", "--from.ca-file", "/ca.pem"}),
            "--from.ca-file: only with an https --from");
}

// The daemon's own settings apply: one of this node's, as a flag or in the config, would be
// ignored, and is refused by name.
TEST(TopOptions, SettingsOfOwnProgramsAreRefusedWithFrom) {
  EXPECT_EQ(parse_error({"top", "--from", "http://n:1", "--mode", "sample"}),
            "--mode: not with --from (the daemon's own settings apply)");
  EXPECT_EQ(parse_error({"top", "--from", "http://n:1", "-F", "999"}),
            "--sample-frequency: not with --from (the daemon's own settings apply)");
}

class TopConfig : public ConfigFileTest {};

TEST_F(TopConfig, AConfigOfOwnProgramsIsRefusedWithFrom) {
  const std::string config = write("hucprof.yaml", "log.level: debug\nsample-frequency: 499\n");
  EXPECT_EQ(parse_error({"top", "--from", "http://n:1", "--config", config}),
            "--sample-frequency: not with --from (the daemon's own settings apply)");
  const std::string logs = write("logs.yaml", "log.level: debug\n");
  EXPECT_EQ(parse_top({"--from", "http://n:1", "--config", logs}).run.log_level, "debug");
}

}  // namespace
}  // namespace hucprof
