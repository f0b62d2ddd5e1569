#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <sys/stat.h>

#include "parse_helpers.h"

namespace hucprof {
namespace {

using std::chrono::milliseconds;
using ::testing::HasSubstr;
using ::testing::StartsWith;

TEST_F(ConfigFileTest, EveryKeyIsRead) {
  const std::string path = write("hucprof.yaml",
                                 "mode: probe\n"
                                 "web.listen-address: 127.0.0.1:9100\n"
                                 "sample-frequency: 49\n"
                                 "interval: 1m30s\n"
                                 "top-k: 50\n"
                                 "latency: true\n"
                                 "probe.attach: kprobe\n"
                                 "log.level: debug\n"
                                 "log.format: json\n");
  const RunOptions o = parse_run({"run", "--config", path});
  EXPECT_EQ(o.config_path, path);
  EXPECT_EQ(o.attach.mode, Mode::Probe);
  EXPECT_EQ(o.listen_addresses, std::vector<std::string>{"127.0.0.1:9100"});
  EXPECT_EQ(o.sample_frequency, 49u);
  EXPECT_EQ(o.interval, milliseconds(90'000));
  EXPECT_EQ(o.top_k, 50u);
  EXPECT_TRUE(o.attach.latency);
  EXPECT_EQ(o.attach.probe_attach, ProbeAttach::Kprobe);
  EXPECT_EQ(o.log_level, "debug");
  EXPECT_EQ(o.log_format, LogFormat::Json);
}

TEST_F(ConfigFileTest, NestedKeysReadLikeDottedOnes) {
  const std::string path = write("nested.yaml",
                                 "# the shipped config uses the nested form\n"
                                 "web:\n"
                                 "  listen-address: \"[::1]:9478\"\n"
                                 "log:\n"
                                 "  level: warn\n"
                                 "probe:\n"
                                 "  attach: fentry\n");
  const RunOptions o = parse_run({"run", "--config", path});
  EXPECT_EQ(o.listen_addresses, std::vector<std::string>{"[::1]:9478"});
  EXPECT_EQ(o.log_level, "warn");
  EXPECT_EQ(o.attach.probe_attach, ProbeAttach::Fentry);
}

TEST_F(ConfigFileTest, FlagsWinOverTheConfig) {
  const std::string path = write("c.yaml",
                                 "mode: probe\n"
                                 "interval: 30s\n"
                                 "top-k: 50\n"
                                 "latency: false\n");
  const RunOptions o =
      parse_run({"run", "--top-k", "7", "--config", path, "--mode", "sample", "--latency"});
  EXPECT_EQ(o.attach.mode, Mode::Sample);       // flag
  EXPECT_EQ(o.top_k, 7u);                       // flag, given before --config
  EXPECT_TRUE(o.attach.latency);                // flag
  EXPECT_EQ(o.interval, milliseconds(30'000));  // config
  EXPECT_EQ(o.sample_frequency, 99u);           // default
}

TEST_F(ConfigFileTest, EmptyFileAndYamlBooleans) {
  EXPECT_EQ(parse_run({"run", "--config", write("empty.yaml", "")}).top_k, 20u);
  EXPECT_EQ(parse_run({"run", "--config", write("comments.yaml", "# nothing\n")}).top_k, 20u);
  EXPECT_TRUE(parse_run({"run", "--config", write("yes.yaml", "latency: yes\n")}).attach.latency);
  EXPECT_FALSE(parse_run({"run", "--config", write("off.yaml", "latency: off\n")}).attach.latency);
}

TEST_F(ConfigFileTest, DoctorReadsTheConfigToo) {
  const std::string path = write("d.yaml", "mode: sample\ntop-k: 5\n");
  const ParseOutcome outcome = parse({"doctor", "--config", path});
  ASSERT_TRUE(outcome.command.has_value()) << outcome.message;
  EXPECT_EQ(outcome.command->run.attach.mode, Mode::Sample);
}

TEST_F(ConfigFileTest, UnknownKeyNamesFileAndLine) {
  const std::string path = write("hucprof.yaml",
                                 "mode: auto\n"
                                 "\n"
                                 "intervall: 10s\n");
  EXPECT_EQ(parse_error({"run", "--config", path}), path + ":3: unknown key \"intervall\"");
  const std::string nested = write("nested.yaml",
                                   "web:\n"
                                   "  listen-address: :9478\n"
                                   "  listen-adress: :9479\n");
  EXPECT_EQ(parse_error({"run", "--config", nested}),
            nested + ":3: unknown key \"web.listen-adress\"");
  // Flags only, not config keys.
  EXPECT_EQ(parse_error({"run", "--config", write("k.yaml", "kallsyms: /x\n")}),
            dir_.string() + "/k.yaml:1: unknown key \"kallsyms\"");
}

TEST_F(ConfigFileTest, BadValuesNameFileLineAndKey) {
  const std::string path = write("v.yaml",
                                 "mode: auto\n"
                                 "sample-frequency: 0\n");
  EXPECT_EQ(parse_error({"run", "--config", path}),
            path + ":2: sample-frequency: 0 is out of range 1..1000");
  EXPECT_EQ(
      parse_error({"run", "--config", write("i.yaml", "top-k: 1\ninterval: 10\n")}),
      dir_.string() + "/i.yaml:2: interval: \"10\" has no unit (use ms, s, m or h, e.g. 10s)");
  EXPECT_EQ(parse_error({"run", "--config", write("m.yaml", "mode: fast\n")}),
            dir_.string() + "/m.yaml:1: mode: \"fast\" is not one of auto, probe, sample");
  EXPECT_EQ(parse_error({"run", "--config", write("l.yaml", "latency: maybe\n")}),
            dir_.string() + "/l.yaml:1: latency: \"maybe\" is not a boolean (true or false)");
  EXPECT_EQ(parse_error({"run", "--config", write("t.yaml", "top-k: [1, 2]\n")}),
            dir_.string() + "/t.yaml:1: top-k: expected a single value, not a list");
  EXPECT_EQ(parse_error({"run", "--config", write("n.yaml", "top-k:\n")}),
            dir_.string() + "/n.yaml:1: top-k: missing value");
  // A bad value is an error even when a flag overrides it: the file is wrong either way.
  EXPECT_EQ(parse_error({"run", "--sample-frequency", "10", "--config", path}),
            path + ":2: sample-frequency: 0 is out of range 1..1000");
}

TEST_F(ConfigFileTest, StructuralProblems) {
  const std::string dup = write("dup.yaml",
                                "web.listen-address: :1\n"
                                "web:\n"
                                "  listen-address: :2\n");
  EXPECT_EQ(parse_error({"run", "--config", dup}),
            dup + ":3: duplicate key \"web.listen-address\" (first set on line 1)");
  EXPECT_EQ(parse_error({"run", "--config", write("list.yaml", "- mode: auto\n")}),
            dir_.string() + "/list.yaml:1: expected a mapping of settings (key: value)");
  EXPECT_THAT(parse_error({"run", "--config", write("broken.yaml", "mode: auto\n  top-k: [\n")}),
              StartsWith(dir_.string() + "/broken.yaml:"));
  EXPECT_THAT(parse_error({"run", "--config", write("broken2.yaml", "mode: [auto\n")}),
              HasSubstr("invalid YAML"));
}

// fuzz_config found both: a key or value with a newline made a two-line message, and a key
// without a value read yaml-cpp's node through a dangling reference (AddressSanitizer).
TEST_F(ConfigFileTest, ErrorsStayOneLineAndKeysWithoutValuesAreNamed) {
  const std::string path = write("nl.yaml", "\"inter\\nval\": 10s\n");
  EXPECT_EQ(parse_error({"run", "--config", path}), path + ":1: unknown key \"inter\\nval\"");
  const std::string empty = write("empty_value.yaml", "mode:\n");
  EXPECT_EQ(parse_error({"run", "--config", empty}), empty + ":1: mode: missing value");
}

TEST_F(ConfigFileTest, UnreadableFileIsNamed) {
  const std::string missing = (dir_ / "nope.yaml").string();
  EXPECT_EQ(parse_error({"run", "--config", missing}),
            missing + ": cannot read config file: no such file or directory");
  EXPECT_EQ(parse_error({"run", "--config", dir_.string()}),
            dir_.string() + ": cannot read config file: is a directory");
  if (geteuid() != 0) {  // root reads anything
    const std::string locked = write("locked.yaml", "mode: auto\n");
    chmod(locked.c_str(), 0);
    EXPECT_EQ(parse_error({"run", "--config", locked}),
              locked + ": cannot read config file: permission denied");
  }
}

}  // namespace
}  // namespace hucprof
