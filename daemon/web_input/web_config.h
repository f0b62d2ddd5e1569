#pragma once
#include <chrono>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "core/base/result.h"

namespace hucprof {

// --web.config.file, in Prometheus exporter-toolkit's format (docs/web-configuration.md there),
// so one file serves hucprof and the exporters next to it. Parsed here, carried out by the web
// server (daemon/export/): TLS through OpenSSL, basic auth through libcrypt's bcrypt.

// Go's crypto/tls names, as the format spells them.
enum class ClientAuth {
  NoClientCert,
  RequestClientCert,           // asked for, not verified, not required
  RequireAnyClientCert,        // required, not verified
  VerifyClientCertIfGiven,     // verified against the client CA when sent
  RequireAndVerifyClientCert,  // required and verified: what mTLS means
};
enum class TlsVersion { TLS10, TLS11, TLS12, TLS13 };

struct WebTlsConfig {
  // Exactly one of each pair: a file (absolute, or relative to the web config file's directory,
  // as exporter-toolkit resolves it) or the PEM text inline.
  std::string cert_file, cert;
  std::string key_file, key;
  std::string client_ca_file, client_ca;
  ClientAuth client_auth = ClientAuth::NoClientCert;
  // A client certificate must carry one of these as a DNS, e-mail, IP or URI SAN.
  std::vector<std::string> client_allowed_sans;
  TlsVersion min_version = TlsVersion::TLS12;
  TlsVersion max_version = TlsVersion::TLS13;
  // IANA names as Go spells them ("TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256"); TLS 1.2 and below.
  std::vector<std::string> cipher_suites;
  bool prefer_server_cipher_suites = true;
  // OpenSSL group names translated from Go's ("CurveP256" -> "P-256").
  std::vector<std::string> curve_groups;

  bool has_client_ca() const { return !client_ca_file.empty() || !client_ca.empty(); }
};

struct WebConfig {
  std::optional<WebTlsConfig> tls;  // nullopt: plain HTTP
  bool http2 = true;                // accepted for compatibility; hucprof serves HTTP/1.1
  std::vector<std::pair<std::string, std::string>> headers;  // added to every response
  std::map<std::string, std::string> basic_auth_users;       // user -> bcrypt hash
  std::chrono::milliseconds rate_limit_interval{0};          // 0: no rate limit
  unsigned rate_limit_burst = 0;

  bool requires_auth() const { return !basic_auth_users.empty(); }
};

// Parses `text`, naming it `name` in errors ("NAME:LINE: words", one line, never a secret);
// relative file names are resolved against base_dir. Pure: reads no file.
Result<WebConfig> parse_web_config(std::string_view text, const std::string& name,
                                   const std::string& base_dir);

// Reads `path` through load_yaml_file (regular file, 1 MiB, no aliases) and parses it.
Result<WebConfig> load_web_config(const std::string& path);

// What loads but weakens what the file asks for, one message each (no secret in them): TLS 1.0
// or 1.1 allowed, bcrypt hashes cheap enough to crack when leaked. The web server logs them
// as warnings at every load.
std::vector<std::string> web_config_warnings(const WebConfig& config);

// "$2y$10$" + 53 characters of bcrypt's base64: the only hash the format allows.
bool is_bcrypt_hash(std::string_view hash);

const char* tls_version_name(TlsVersion version);

}  // namespace hucprof
