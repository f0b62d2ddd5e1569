#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "config_file_fixture.h"
#include "web_input/web_config.h"

namespace hucprof {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;
using ::testing::StartsWith;

// A bcrypt hash as `htpasswd -nbBC 10 alice secret` printed it.
const char* const kHash = "$2y$10$3vXzJfnm2q5WxIXgWxaFt.h0pnkq.9HxIJmBoMc.8j/CCCUXszow.";

WebConfig parse_ok(const std::string& text, const std::string& dir = "/etc/hucprof") {
  auto parsed = parse_web_config(text, "web.yml", dir);
  if (!parsed.ok()) {
    ADD_FAILURE() << parsed.error().text;
    return {};
  }
  return parsed.value();
}

std::string parse_error(const std::string& text) {
  auto parsed = parse_web_config(text, "web.yml", "/etc/hucprof");
  if (parsed.ok()) {
    ADD_FAILURE() << "parsed, expected an error:\n" << text;
    return "";
  }
  const std::string error = parsed.error().text;
  EXPECT_EQ(error.find('\n'), std::string::npos) << error;
  return error;
}

TEST(WebConfig, EmptyMeansPlainHttpWithoutAuth) {
  for (const char* text : {"", "# nothing\n", "tls_server_config:\nbasic_auth_users:\n"}) {
    const WebConfig config = parse_ok(text);
    EXPECT_FALSE(config.tls.has_value());
    EXPECT_FALSE(config.requires_auth());
    EXPECT_TRUE(config.headers.empty());
  }
}

// The example of exporter-toolkit's docs/web-configuration.md, every key set.
TEST(WebConfig, ReadsEveryKeyOfTheExporterToolkitFormat) {
  const WebConfig config = parse_ok(std::string(R"(
tls_server_config:
  cert_file: tls/server.crt
  key_file: /secure/server.key
  client_auth_type: RequireAndVerifyClientCert
  client_ca_file: ca.pem
  client_allowed_sans: [prometheus.example.org, 10.0.0.1]
  min_version: TLS13
  max_version: TLS13
  cipher_suites: [TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256]
  prefer_server_cipher_suites: false
  curve_preferences: [X25519, CurveP256]
http_server_config:
  http2: false
  headers:
    X-Frame-Options: deny
    Strict-Transport-Security: max-age=31536000
rate_limit:
  interval: 100ms
  burst: 5
basic_auth_users:
  alice: )") + kHash + "\n  bob: '" +
                                    kHash + "'\n");
  ASSERT_TRUE(config.tls.has_value());
  const WebTlsConfig& tls = *config.tls;
  EXPECT_EQ(tls.cert_file, "/etc/hucprof/tls/server.crt");  // relative to the config file
  EXPECT_EQ(tls.key_file, "/secure/server.key");
  EXPECT_EQ(tls.client_ca_file, "/etc/hucprof/ca.pem");
  EXPECT_EQ(tls.client_auth, ClientAuth::RequireAndVerifyClientCert);
  EXPECT_THAT(tls.client_allowed_sans,
              ::testing::ElementsAre("prometheus.example.org", "10.0.0.1"));
  EXPECT_EQ(tls.min_version, TlsVersion::TLS13);
  EXPECT_EQ(tls.max_version, TlsVersion::TLS13);
  EXPECT_THAT(tls.cipher_suites, ::testing::ElementsAre("TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256"));
  EXPECT_FALSE(tls.prefer_server_cipher_suites);
  EXPECT_THAT(tls.curve_groups, ::testing::ElementsAre("X25519", "P-256"));
  EXPECT_FALSE(config.http2);
  EXPECT_THAT(config.headers, ::testing::UnorderedElementsAre(
                                  std::pair<std::string, std::string>{"X-Frame-Options", "deny"},
                                  std::pair<std::string, std::string>{"Strict-Transport-Security",
                                                                      "max-age=31536000"}));
  EXPECT_EQ(config.rate_limit_interval, std::chrono::milliseconds(100));
  EXPECT_EQ(config.rate_limit_burst, 5u);
  EXPECT_EQ(config.basic_auth_users.size(), 2u);
  EXPECT_EQ(config.basic_auth_users.at("alice"), kHash);
}

TEST(WebConfig, DefaultsAreExporterToolkits) {
  const WebConfig config = parse_ok("tls_server_config:\n  cert: x\n  key: y\n");
  ASSERT_TRUE(config.tls.has_value());
  EXPECT_EQ(config.tls->cert, "x");
  EXPECT_EQ(config.tls->min_version, TlsVersion::TLS12);
  EXPECT_EQ(config.tls->max_version, TlsVersion::TLS13);
  EXPECT_EQ(config.tls->client_auth, ClientAuth::NoClientCert);
  EXPECT_TRUE(config.tls->prefer_server_cipher_suites);
  EXPECT_TRUE(config.http2);
  // Only versions: TLS stays off, as in exporter-toolkit.
  EXPECT_FALSE(parse_ok("tls_server_config:\n  min_version: TLS13\n").tls.has_value());
}

TEST(WebConfig, UnknownKeysNameFileLineAndSection) {
  EXPECT_EQ(parse_error("basic_auth_users:\ntls_config:\n  cert_file: x\n"),
            "web.yml:2: unknown key \"tls_config\"");
  EXPECT_EQ(parse_error("tls_server_config:\n  cert_file: a\n  key_file: b\n  cert_flie: c\n"),
            "web.yml:4: unknown key \"cert_flie\" in tls_server_config");
  EXPECT_EQ(parse_error("http_server_config:\n  headers:\n    X-Powered-By: me\n"),
            "web.yml:3: unknown key \"X-Powered-By\" in http_server_config.headers");
  EXPECT_EQ(parse_error("rate_limit:\n  every: 1s\n"),
            "web.yml:2: unknown key \"every\" in rate_limit");
  EXPECT_EQ(parse_error("tls_server_config:\n  cert: a\n  cert: b\n  key: c\n"),
            "web.yml:3: duplicate key \"cert\"");
}

TEST(WebConfig, BadValuesSayWhatIsWrong) {
  const std::string tls = "tls_server_config:\n  cert_file: a\n  key_file: b\n";
  EXPECT_EQ(parse_error(tls + "  client_auth_type: Always\n"),
            "web.yml:4: tls_server_config.client_auth_type: \"Always\" is not one of NoClientCert, "
            "RequestClientCert, RequireAnyClientCert, VerifyClientCertIfGiven, "
            "RequireAndVerifyClientCert, RequireClientCert");
  EXPECT_EQ(parse_error(tls + "  min_version: TLS14\n"),
            "web.yml:4: tls_server_config.min_version: \"TLS14\" is not one of TLS10, TLS11, "
            "TLS12, TLS13");
  EXPECT_EQ(parse_error(tls + "  min_version: TLS13\n  max_version: TLS12\n"),
            "web.yml:1: tls_server_config: min_version TLS13 is above max_version TLS12");
  EXPECT_THAT(parse_error(tls + "  curve_preferences: [CurveP999]\n"),
              HasSubstr("\"CurveP999\" is not one of CurveP256, CurveP384, CurveP521, X25519"));
  EXPECT_THAT(parse_error(tls + "  prefer_server_cipher_suites: maybe\n"),
              HasSubstr("not a boolean"));
  EXPECT_THAT(parse_error(tls + "  cipher_suites: TLS_X\n"),
              HasSubstr("cipher_suites: expected a list"));
  EXPECT_THAT(parse_error(tls + "  cert_file: [a]\n"), HasSubstr("duplicate key"));
  EXPECT_THAT(parse_error("tls_server_config:\n  cert_file: [a]\n  key_file: b\n"),
              HasSubstr("web.yml:2: tls_server_config.cert_file: expected a single value"));
  EXPECT_EQ(parse_error("tls_server_config:\n  key_file: b\n"),
            "web.yml:1: tls_server_config: missing cert_file (or cert)");
  EXPECT_EQ(parse_error("tls_server_config:\n  cert_file: a\n"),
            "web.yml:1: tls_server_config: missing key_file (or key)");
  EXPECT_THAT(parse_error(tls + "  cert: inline\n"), HasSubstr("cert_file and cert are two ways"));
  EXPECT_THAT(parse_error(tls + "  client_ca_file: ca.pem\n"),
              HasSubstr("client_auth_type is NoClientCert"));
  EXPECT_THAT(parse_error(tls + "  client_auth_type: RequireAndVerifyClientCert\n"),
              HasSubstr("needs client_ca_file"));
  EXPECT_THAT(
      parse_error(tls + "  client_auth_type: VerifyClientCertIfGiven\n  client_ca_file: ca\n"
                        "  client_allowed_sans: [x]\n"),
      HasSubstr("client_allowed_sans needs client_auth_type RequireAnyClientCert or "
                "RequireAndVerifyClientCert"));
  EXPECT_THAT(parse_error("http_server_config:\n  headers:\n    X-Frame-Options: allow\n"),
              HasSubstr("\"allow\" is not one of deny, sameorigin"));
  EXPECT_THAT(
      parse_error(
          "http_server_config:\n  headers:\n    X-XSS-Protection: \"1\\r\\nSet-Cookie: x\"\n"),
      HasSubstr("cannot contain a line break"));
  EXPECT_THAT(parse_error("rate_limit:\n  interval: soon\n  burst: 1\n"),
              HasSubstr("rate_limit.interval: "));
  EXPECT_THAT(parse_error("rate_limit:\n  interval: 1s\n"),
              HasSubstr("needs a burst of at least 1"));
  EXPECT_THAT(parse_error("rate_limit:\n  interval: 1s\n  burst: -1\n"),
              HasSubstr("not a whole number"));
  EXPECT_EQ(parse_error("- a\n- b\n"),
            "web.yml:1: expected a mapping of tls_server_config, http_server_config, "
            "basic_auth_users and rate_limit");
  // A key or value with a line break still gives one line.
  EXPECT_EQ(parse_error("\"tls\\nserver\": 1\n"), "web.yml:1: unknown key \"tls\\x0aserver\"");
  EXPECT_THAT(parse_error("rate_limit:\n  interval: \"1\\ns\"\n  burst: 1\n"), HasSubstr("\\x0a"));
}

TEST(WebConfig, UsersNeedBcryptHashesAndTheHashIsNeverRepeated) {
  const std::string error = parse_error("basic_auth_users:\n  alice: secret-in-clear\n");
  EXPECT_THAT(error, StartsWith("web.yml:2: basic_auth_users: user \"alice\": not a bcrypt hash"));
  EXPECT_THAT(error, Not(HasSubstr("secret-in-clear")));
  // $2a$ and $2b$ too; MD5 ($apr1$), SHA-crypt ($6$) and truncated hashes are refused.
  EXPECT_TRUE(
      parse_ok(std::string("basic_auth_users:\n  a: $2a") + (kHash + 3) + "\n").requires_auth());
  EXPECT_TRUE(
      parse_ok(std::string("basic_auth_users:\n  a: $2b") + (kHash + 3) + "\n").requires_auth());
  for (const std::string& bad : std::vector<std::string>{
           "$apr1$abc$def", "$6$salt$hash", std::string(kHash).substr(0, 59),
           std::string("$2y$03") + (kHash + 6), std::string("$2x") + (kHash + 3)}) {
    EXPECT_THAT(parse_error("basic_auth_users:\n  a: '" + bad + "'\n"),
                HasSubstr("not a bcrypt hash"))
        << bad;
  }
  EXPECT_THAT(parse_error(std::string("basic_auth_users:\n  a: $2y$15") + (kHash + 6) + "\n"),
              HasSubstr("bcrypt cost 15 is above 14"));
  EXPECT_THAT(parse_error(std::string("basic_auth_users:\n  'a:b': ") + kHash + "\n"),
              HasSubstr("\"a:b\" is not a valid user name"));
  EXPECT_THAT(parse_error("basic_auth_users: [alice]\n"),
              HasSubstr("expected a mapping of user: bcrypt hash"));
}

// What loads but weakens the setup is said at every load (the server logs these as warnings).
TEST(WebConfig, WeakSettingsAreWarnedAbout) {
  EXPECT_THAT(web_config_warnings(parse_ok(std::string("basic_auth_users:\n  alice: ") + kHash)),
              testing::IsEmpty());
  const auto cheap = web_config_warnings(
      parse_ok(std::string("basic_auth_users:\n  bob: $2y$04") + (kHash + 6) + "\n"));
  ASSERT_EQ(cheap.size(), 1u);
  EXPECT_EQ(cheap[0],
            "basic_auth_users: user \"bob\": bcrypt cost 4 is below 10, cheap to crack if the file "
            "leaks (htpasswd -nBC 10 USER)");
  EXPECT_THAT(cheap[0], Not(HasSubstr("$2y$"))) << "never the hash";
  const auto old = web_config_warnings(parse_ok(
      "tls_server_config:\n  cert_file: c.crt\n  key_file: c.key\n  min_version: TLS10\n"));
  ASSERT_EQ(old.size(), 1u);
  EXPECT_THAT(old[0], HasSubstr("min_version TLS10 allows TLS 1.0 or 1.1, deprecated by RFC 8996"));
  EXPECT_THAT(
      web_config_warnings(parse_ok(
          "tls_server_config:\n  cert_file: c.crt\n  key_file: c.key\n  min_version: TLS12\n")),
      testing::IsEmpty());
}

// Issue 9's hostile inputs, for this file too: it goes through the same bounded reader.
TEST_F(ConfigFileTest, WebConfigFileIsBoundedLikeTheConfig) {
  auto error_of = [](const std::string& path) {
    auto loaded = load_web_config(path);
    return !loaded.ok() ? loaded.error().text : "loaded";
  };
  EXPECT_EQ(error_of("/nonexistent/web.yml"),
            "/nonexistent/web.yml: cannot read web config file: no such file or directory");
  EXPECT_EQ(error_of("/dev/zero"), "/dev/zero: cannot read web config file: not a regular file");
  EXPECT_EQ(error_of(dir_.string()),
            dir_.string() + ": cannot read web config file: is a directory");
  std::string laughs =
      "a: &a [x, x, x, x, x, x, x, x, x, x]\nb: &b [*a, *a, *a, *a, *a, *a, *a, *a]\n";
  const std::string bomb = write("bomb.yml", laughs);
  EXPECT_THAT(error_of(bomb), HasSubstr("anchors (&name) are not allowed here"));
  const std::string big = write("big.yml", "# " + std::string(2 << 20, 'x') + "\n");
  EXPECT_THAT(error_of(big), HasSubstr("larger than 1048576 bytes"));
  // Relative paths are resolved against the file's own directory.
  const std::string good =
      write("web.yml", "tls_server_config:\n  cert_file: c.pem\n  key_file: k.pem\n");
  auto loaded = load_web_config(good);
  ASSERT_TRUE(loaded.ok());
  EXPECT_EQ(loaded.value().tls->cert_file, (dir_ / "c.pem").string());
}

// What the package ships must load once copied: every key known, TLS on.
TEST(WebConfig, TheShippedExampleParses) {
  const std::string path = std::string(HUC_TEST_DATA_DIR) + "/../../deploy/web-config.yaml.example";
  auto loaded = load_web_config(path);
  ASSERT_TRUE(loaded.ok()) << loaded.error().text;
  const WebConfig& config = loaded.value();
  ASSERT_TRUE(config.tls.has_value());
  EXPECT_THAT(config.tls->cert_file, ::testing::EndsWith("/deploy/tls.crt"));
  EXPECT_FALSE(config.requires_auth());  // no shipped password hash anyone could know
}

TEST(WebConfig, BcryptHashShape) {
  EXPECT_TRUE(is_bcrypt_hash(kHash));
  EXPECT_TRUE(is_bcrypt_hash("$2a$05$CCCCCCCCCCCCCCCCCCCCC.E5YPO9kmyuRGyh0XouQYb4YMJKvyOeW"));
  EXPECT_FALSE(is_bcrypt_hash(""));
  EXPECT_FALSE(is_bcrypt_hash("$2y$10$"));
  EXPECT_FALSE(is_bcrypt_hash("$2y$1x$3vXzJfnm2q5WxIXgWxaFt.h0pnkq.9HxIJmBoMc.8j/CCCUXszow."));
  EXPECT_FALSE(is_bcrypt_hash("$2y$10$3vXzJfnm2q5WxIXgWxaFt.h0pnkq.9HxIJmBoMc.8j/CCCUXszow!"));
}

}  // namespace
}  // namespace hucprof
