#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "parse_helpers.h"

namespace hucprof {
namespace {

using ::testing::HasSubstr;
using ::testing::StartsWith;

// Issue 9: these were accepted by the flag parser and failed only when the server started, with
// exit code 1 and the message on stdout. They are usage errors: exit 2, one line naming the flag
// (main prints it on stderr).
TEST(WebFlags, BadListenAddressesAreUsageErrorsNamingTheFlag) {
  for (const char* address : {"host:", ":65536", "127.0.0.1:-1", "999.1.1.1:80", "9478", "::1:80",
                              "[::1]", "bad host:80", "localhost:http"}) {
    SCOPED_TRACE(address);
    EXPECT_THAT(parse_error({"run", "--web.listen-address", address}),
                StartsWith(std::string("--web.listen-address: \"") + address + "\": "));
  }
  EXPECT_EQ(parse_error({"run", "--web.listen-address", "999.1.1.1:80"}),
            "--web.listen-address: \"999.1.1.1:80\": \"999.1.1.1\" is not a valid IPv4 address "
            "(four decimal numbers 0..255 without leading zeros, as Go's net.ParseIP reads them)");
}

TEST(WebFlags, GoodListenAddressesPass) {
  for (const char* address :
       {":9478", "[::]:9478", "[::1]:0", "127.0.0.1:9478", "localhost:9478"}) {
    EXPECT_EQ(parse_run({"run", "--web.listen-address", address}).listen_addresses,
              std::vector<std::string>{address});
  }
}

TEST_F(ConfigFileTest, BadListenAddressInTheConfigNamesFileAndLine) {
  const std::string path = write("hucprof.yaml", "mode: auto\nweb.listen-address: \":65536\"\n");
  EXPECT_THAT(parse_error({"run", "--config", path}),
              StartsWith(path + ":2: web.listen-address: \":65536\": port \"65536\""));
}

TEST(WebFlags, ListenAddressRepeatsLikeNodeExporters) {
  EXPECT_EQ(parse_run({"run"}).listen_addresses, std::vector<std::string>{":9478"});
  // Given once or more, the flags replace the default; each address is served alike.
  EXPECT_EQ(parse_run({"run", "--web.listen-address", "127.0.0.1:9478", "--web.listen-address",
                       "[::1]:9478"})
                .listen_addresses,
            (std::vector<std::string>{"127.0.0.1:9478", "[::1]:9478"}));
  EXPECT_EQ(parse_error({"run", "--web.listen-address", ":1", "--web.listen-address", ":1"}),
            "--web.listen-address: \":1\" is given twice");
  EXPECT_THAT(parse_error({"run", "--web.listen-address", ":1", "--web.listen-address", ":x"}),
              StartsWith("--web.listen-address: \":x\": "));
  // One value per flag: a second word is not an address.
  EXPECT_EQ(parse_error({"run", "--web.listen-address", ":1", ":2"}), "unexpected argument \":2\"");
}

TEST_F(ConfigFileTest, ListenAddressesMayBeAYamlList) {
  const std::string path =
      write("hucprof.yaml", "web.listen-address: [\"127.0.0.1:9478\", \"[::1]:9478\"]\n");
  EXPECT_EQ(parse_run({"run", "--config", path}).listen_addresses,
            (std::vector<std::string>{"127.0.0.1:9478", "[::1]:9478"}));
  // Flags win over the file, as for every setting.
  EXPECT_EQ(parse_run({"run", "--config", path, "--web.listen-address", ":1"}).listen_addresses,
            std::vector<std::string>{":1"});
  const std::string nested = write("n.yaml", "web.listen-address: [[\":1\"]]\n");
  EXPECT_EQ(parse_error({"run", "--config", nested}),
            nested + ":1: web.listen-address: expected a list of plain values");
  const std::string other = write("o.yaml", "top-k: [1, 2]\n");
  EXPECT_EQ(parse_error({"run", "--config", other}),
            other + ":1: top-k: expected a single value, not a list");
}

TEST(WebFlags, TelemetryPath) {
  EXPECT_EQ(parse_run({"run"}).telemetry_path, "/metrics");
  EXPECT_EQ(parse_run({"run", "--web.telemetry-path", "/probe/metrics"}).telemetry_path,
            "/probe/metrics");
  EXPECT_EQ(parse_error({"run", "--web.telemetry-path", "metrics"}),
            "--web.telemetry-path: \"metrics\" does not start with /");
  EXPECT_EQ(parse_error({"run", "--web.telemetry-path", "/-/ready"}),
            "--web.telemetry-path: \"/-/ready\" is one of hucprof's other pages");
  EXPECT_EQ(parse_error({"run", "--web.telemetry-path", "/a b"}),
            "--web.telemetry-path: \"/a b\" holds a space, control character, '?' or '#'");
}

TEST(WebFlags, SystemdSocketIsASwitch) {
  EXPECT_FALSE(parse_run({"run"}).systemd_socket);
  EXPECT_TRUE(parse_run({"run", "--web.systemd-socket"}).systemd_socket);
  EXPECT_THAT(parse_error({"doctor", "--web.systemd-socket"}), HasSubstr("--web.systemd-socket"));
}

TEST(WebFlags, WebConfigFileIsAPath) {
  EXPECT_EQ(parse_run({"run"}).web_config_file, "");
  EXPECT_EQ(parse_run({"run", "--web.config.file", "/etc/hucprof/web.yml"}).web_config_file,
            "/etc/hucprof/web.yml");
  // Empty means none, as exporter-toolkit's --web.config.file (the fuzzer's read-back check),
  // and --config "" means no config file alike (it was an unreadable file "").
  EXPECT_EQ(parse_run({"run", "--web.config.file", ""}).web_config_file, "");
  EXPECT_FALSE(parse_run({"run", "--config", ""}).config_path.has_value());
  EXPECT_THAT(parse({"run", "--help"}).message, HasSubstr("--web.config.file"));
  // doctor serves nothing.
  EXPECT_THAT(parse_error({"doctor", "--web.config.file", "x"}), HasSubstr("--web.config.file"));
}

}  // namespace
}  // namespace hucprof
