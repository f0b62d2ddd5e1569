// Config input from outside must never take the host down: each case here grew the daemon to
// gigabytes, aborted it or blocked it forever on b022eb4.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <sys/stat.h>

#include <string>

#include "config/safe_yaml.h"
#include "parse_helpers.h"

namespace hucprof {
namespace {

using ::testing::EndsWith;
using ::testing::HasSubstr;

// "Billion laughs": 9 levels of 10 aliases each, 10^9 leaves from ~800 bytes.
std::string nested_aliases() {
  std::string text =
      "a0: &a0 [\"lol\",\"lol\",\"lol\",\"lol\",\"lol\",\"lol\",\"lol\",\"lol\",\"lol\",\"lol\"]\n";
  for (int level = 1; level <= 9; ++level) {
    const std::string prev = "*a" + std::to_string(level - 1);
    text += "a" + std::to_string(level) + ": &a" + std::to_string(level) + " [";
    for (int i = 0; i < 10; ++i) text += (i ? "," : "") + prev;
    text += "]\n";
  }
  return text;
}

TEST_F(ConfigFileTest, NestedAliasesAreRefusedBeforeTheyExpand) {
  const std::string path = write("laughs.yaml", nested_aliases());
  EXPECT_EQ(parse_error({"run", "--config", path}),
            path + ":1: anchors (&name) are not allowed here");
}

TEST_F(ConfigFileTest, DevZeroIsNotReadForever) {
  EXPECT_EQ(parse_error({"run", "--config", "/dev/zero"}),
            "/dev/zero: cannot read config file: not a regular file");
}

TEST_F(ConfigFileTest, FifoIsRefusedWithoutWaitingForAWriter) {
  const std::string path = (dir_ / "fifo.yaml").string();
  ASSERT_EQ(mkfifo(path.c_str(), 0600), 0);
  EXPECT_EQ(parse_error({"run", "--config", path}),
            path + ": cannot read config file: not a regular file");
}

TEST_F(ConfigFileTest, FileAboveOneMebibyteIsRefused) {
  const std::string path = write("big.yaml", "# " + std::string(size_t{1} << 20, 'x') + "\n");
  EXPECT_EQ(parse_error({"run", "--config", path}),
            path + ": cannot read config file: larger than 1048576 bytes");
}

// yaml-cpp queues every token inside a flow collection within another before its parser sees
// one: 1 MiB of "[" took 256 MB, of "{a:" 108 MB, a flat list inside a list 154 MB, all before
// the node and depth limits could act. They are refused from the bytes now, at once.
TEST(SafeYaml, NestedFlowCollectionsAreRefusedBeforeYamlCppSeesThem) {
  const size_t mib = size_t{1} << 20;
  for (const char* unit : {"[", "{", "{a:", "[{a: "}) {
    std::string text = "a: ";
    while (text.size() < mib) text += unit;
    text.resize(mib);
    auto loaded = load_yaml_text(text, "deep.yaml");
    ASSERT_FALSE(loaded.ok()) << unit;
    EXPECT_EQ(loaded.error().text, "deep.yaml:1: nested more than 64 levels deep") << unit;
  }
  std::string flat = "a: [[";
  while (flat.size() < mib) flat += "x,";
  flat.resize(mib - 2);
  flat += "]]";
  auto loaded = load_yaml_text(flat, "flat.yaml");
  ASSERT_FALSE(loaded.ok());
  EXPECT_THAT(loaded.error().text,
              HasSubstr("flat.yaml:1: more than 10000 of the flow collection characters"));
  // Closing brackets inside quotes do not hide the openers around them.
  std::string quoted = "a: ";
  while (quoted.size() < mib) quoted += "[\"]\",";
  quoted.resize(mib);
  loaded = load_yaml_text(quoted, "quoted.yaml");
  ASSERT_FALSE(loaded.ok());
  EXPECT_THAT(loaded.error().text, HasSubstr("more than 10000 of the flow collection"));
  // A settings file with a few flow lists is fine.
  EXPECT_TRUE(load_yaml_text("a: [x, y]\nb: {c: [1, 2], d: e}\n", "ok.yaml").ok());
}

TEST(SafeYaml, BytesThatAreNotYamlTextAreNamedWithTheirLine) {
  auto error_of = [](std::string_view text) {
    auto loaded = load_yaml_text(text, "t.yaml");
    return !loaded.ok() ? loaded.error().text : "(ok)";
  };
  // A NUL came out as "invalid YAML: unknown escape character: \n" before.
  EXPECT_EQ(error_of(std::string_view("interval: 10s\0\n", 15)),
            "t.yaml:1: control character \"\\x00\" (YAML text holds none but tab and line breaks)");
  EXPECT_EQ(error_of("a: 1\nb: \x1b[31m\n"),
            "t.yaml:2: control character \"\\x1b\" (YAML text holds none but tab and line breaks)");
  EXPECT_EQ(error_of("a: 1\n\nk\xff: 2\n"),
            "t.yaml:3: byte \"\\xff\" is not UTF-8 (YAML files are UTF-8 text)");
  EXPECT_EQ(error_of("a: \"caf\xc3\xa9\"\t# c\r\n"), "(ok)");
}

TEST(SafeYaml, NodeCountIsBounded) {
  std::string text = "list:\n";
  for (int i = 0; i < 200; ++i) text += "  - x\n";
  auto loaded = load_yaml_text(text, "t.yaml", YamlLimits{1 << 20, 100});
  ASSERT_FALSE(loaded.ok());
  EXPECT_THAT(loaded.error().text, EndsWith("more than 100 YAML nodes"));
}

TEST(SafeYaml, NestingDepthIsBounded) {
  // yaml-cpp alone stops at 2000 levels with the message "bad file".
  const std::string deep = "a: " + std::string(5000, '[') + std::string(5000, ']') + "\n";
  auto loaded = load_yaml_text(deep, "t.yaml");
  ASSERT_FALSE(loaded.ok());
  EXPECT_EQ(loaded.error().text, "t.yaml:1: nested more than 64 levels deep");
  std::string nested_maps = "a:\n";
  for (int i = 1; i <= 70; ++i)
    nested_maps += std::string(2 * i, ' ') + "k" + std::to_string(i) + ":\n";
  loaded = load_yaml_text(nested_maps, "t.yaml");
  ASSERT_FALSE(loaded.ok());
  EXPECT_EQ(loaded.error().text, "t.yaml:65: nested more than 64 levels deep");
}

TEST(SafeYaml, SecondDocumentIsRefused) {
  auto loaded = load_yaml_text("mode: auto\n---\nmode: probe\n", "t.yaml");
  ASSERT_FALSE(loaded.ok());
  EXPECT_EQ(loaded.error().text, "t.yaml:1: more than one YAML document");
}

TEST(SafeYaml, PlainSettingsLoad) {
  auto loaded = load_yaml_text("mode: auto\nweb:\n  listen-address: \":9478\"\n", "t.yaml");
  ASSERT_TRUE(loaded.ok());
  EXPECT_EQ(loaded.value()["web"]["listen-address"].as<std::string>(), ":9478");
}

}  // namespace
}  // namespace hucprof
