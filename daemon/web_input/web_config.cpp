#include "web_input/web_config.h"

#include <algorithm>
#include <array>
#include <cctype>
#include <filesystem>
#include <map>
#include <optional>
#include <vector>

#include "config/safe_yaml.h"
#include "config/yaml_fields.h"
#include "core/base/message_text.h"
#include "core/base/named_values.h"
#include "core/base/text_chars.h"
#include "core/files/file_text.h"
#include "core/text/duration.h"

namespace hucprof {
namespace {

using namespace yaml_fields;  // the strict readers every section of the file is read with

// Bounds far above any real web config and far below what costs memory.
constexpr size_t kMaxUsers = 1000;
// bcrypt doubles its work per cost step: cost 10 takes ~70 ms, 14 about a second. Above that
// one check holds the login thread (and a clean stop) for many seconds.
constexpr int kMaxBcryptCost = 14;
// Go's bcrypt.DefaultCost, what exporter-toolkit's documentation generates hashes with; below it
// a leaked hash is cheap to try passwords against.
constexpr int kLowBcryptCost = 10;

constexpr NamedValues<ClientAuth, 6> kClientAuth{{
    {"NoClientCert", ClientAuth::NoClientCert},
    {"RequestClientCert", ClientAuth::RequestClientCert},
    {"RequireAnyClientCert", ClientAuth::RequireAnyClientCert},
    {"VerifyClientCertIfGiven", ClientAuth::VerifyClientCertIfGiven},
    {"RequireAndVerifyClientCert", ClientAuth::RequireAndVerifyClientCert},
    {"RequireClientCert", ClientAuth::RequireAnyClientCert},  // exporter-toolkit's old name
}};

constexpr NamedValues<TlsVersion, 4> kVersions{{
    {"TLS10", TlsVersion::TLS10},
    {"TLS11", TlsVersion::TLS11},
    {"TLS12", TlsVersion::TLS12},
    {"TLS13", TlsVersion::TLS13},
}};

// Go's tls.CurveID names -> OpenSSL's group names.
constexpr NamedValues<std::string_view, 4> kCurves{{
    {"CurveP256", "P-256"},
    {"CurveP384", "P-384"},
    {"CurveP521", "P-521"},
    {"X25519", "X25519"},
}};

// The response headers exporter-toolkit lets a web config set, and the values it allows
// (empty: any value).
struct AllowedHeader {
  std::string_view name;
  std::vector<std::string_view> values;
};
const std::array<AllowedHeader, 5>& allowed_headers() {
  static const std::array<AllowedHeader, 5> headers{{
      {"Content-Security-Policy", {}},
      {"X-Frame-Options", {"deny", "sameorigin"}},
      {"X-Content-Type-Options", {"nosniff"}},
      {"X-XSS-Protection", {}},
      {"Strict-Transport-Security", {}},
  }};
  return headers;
}

std::string resolve_path(const std::string& path, const std::string& base_dir) {
  if (path.empty() || path.front() == '/' || base_dir.empty()) return path;
  return (std::filesystem::path(base_dir) / path).lexically_normal().string();
}

// The file and the inline text are two ways to give one thing; both at once is a mistake.
Result<void> pick_one(const std::string& file, const std::string& text, const char* file_key,
                      const char* text_key, int line) {
  if (!file.empty() && !text.empty()) {
    return at(line, std::string("tls_server_config: ") + file_key + " and " + text_key +
                        " are two ways to give the same thing; set one");
  }
  return {};
}

// What the keys of tls_server_config say together, once each is read (tls.client_auth_text:
// as written, "" when not given).
Result<void> check_tls(const WebTlsConfig& tls, const std::string& client_auth_text,
                       bool sans_given, int line) {
  for (const Result<void>& one :
       {pick_one(tls.cert_file, tls.cert, "cert_file", "cert", line),
        pick_one(tls.key_file, tls.key, "key_file", "key", line),
        pick_one(tls.client_ca_file, tls.client_ca, "client_ca_file", "client_ca", line)}) {
    if (!one.ok()) return one;
  }
  if (tls.cert_file.empty() && tls.cert.empty()) {
    return at(line, "tls_server_config: missing cert_file (or cert)");
  }
  if (tls.key_file.empty() && tls.key.empty()) {
    return at(line, "tls_server_config: missing key_file (or key)");
  }
  if (tls.min_version > tls.max_version) {
    return at(line, std::string("tls_server_config: min_version ") +
                        tls_version_name(tls.min_version) + " is above max_version " +
                        tls_version_name(tls.max_version));
  }
  const bool verifies = tls.client_auth == ClientAuth::VerifyClientCertIfGiven ||
                        tls.client_auth == ClientAuth::RequireAndVerifyClientCert;
  if (tls.has_client_ca() && tls.client_auth == ClientAuth::NoClientCert) {
    return at(line,
              "tls_server_config: client_ca_file is set but client_auth_type is "
              "NoClientCert (use RequireAndVerifyClientCert for mutual TLS)");
  }
  // Go falls back to the system's roots here; hucprof wants the CA that signs its scrapers.
  if (verifies && !tls.has_client_ca()) {
    return at(line, "tls_server_config: client_auth_type " + client_auth_text +
                        " needs client_ca_file (the CA that signs the clients' certificates)");
  }
  if (sans_given && tls.client_auth != ClientAuth::RequireAnyClientCert &&
      tls.client_auth != ClientAuth::RequireAndVerifyClientCert) {
    return at(line,
              "tls_server_config: client_allowed_sans needs client_auth_type "
              "RequireAnyClientCert or RequireAndVerifyClientCert (otherwise a client may "
              "send no certificate to match)");
  }
  return {};
}

// tls_server_config; nullopt when it turns TLS on by none of its keys.
Result<std::optional<WebTlsConfig>> read_tls(const YAML::Node& node, int line,
                                             const std::string& base_dir) {
  WebTlsConfig tls;
  std::string client_auth_text;
  bool sans_given = false;
  const std::string k = "tls_server_config.";
  Result<void> read = read_section(
      node, "tls_server_config", line,
      {
          {"cert_file", set_text(tls.cert_file, k + "cert_file")},
          {"key_file", set_text(tls.key_file, k + "key_file")},
          {"client_ca_file", set_text(tls.client_ca_file, k + "client_ca_file")},
          {"cert", set_text(tls.cert, k + "cert")},
          {"key", set_text(tls.key, k + "key")},
          {"client_ca", set_text(tls.client_ca, k + "client_ca")},
          {"client_auth_type",
           [&](const YAML::Node& v, int l) -> Result<void> {
             if (Result<void> text = set_text(client_auth_text, k + "client_auth_type")(v, l);
                 !text.ok() || client_auth_text.empty()) {
               return text;
             }
             const Result<ClientAuth> auth =
                 one_of(client_auth_text, kClientAuth, l, k + "client_auth_type");
             if (!auth.ok()) return auth.error();
             tls.client_auth = auth.value();
             return {};
           }},
          {"client_allowed_sans",
           [&](const YAML::Node& v, int l) -> Result<void> {
             sans_given = !v.IsNull();
             return set_list(tls.client_allowed_sans, k + "client_allowed_sans")(v, l);
           }},
          {"min_version", set_one_of(tls.min_version, kVersions, k + "min_version")},
          {"max_version", set_one_of(tls.max_version, kVersions, k + "max_version")},
          {"cipher_suites", set_list(tls.cipher_suites, k + "cipher_suites")},
          {"prefer_server_cipher_suites",
           set_boolean(tls.prefer_server_cipher_suites, k + "prefer_server_cipher_suites")},
          {"curve_preferences",
           [&](const YAML::Node& v, int l) -> Result<void> {
             const Result<std::vector<std::string>> curves =
                 string_list(v, l, k + "curve_preferences");
             if (!curves.ok()) return curves.error();
             for (const std::string& curve : curves.value()) {
               const Result<std::string_view> group =
                   one_of(curve, kCurves, l, k + "curve_preferences");
               if (!group.ok()) return group.error();
               tls.curve_groups.emplace_back(group.value());
             }
             return {};
           }},
      });
  if (!read.ok()) return read.error();

  // As exporter-toolkit decides: TLS is on when any certificate, key, CA or client auth
  // policy is given (only versions or ciphers leave it off).
  const bool enabled = !tls.cert_file.empty() || !tls.cert.empty() || !tls.key_file.empty() ||
                       !tls.key.empty() || tls.has_client_ca() || !client_auth_text.empty();
  if (!enabled) return std::optional<WebTlsConfig>();
  if (Result<void> checked = check_tls(tls, client_auth_text, sans_given, line); !checked.ok()) {
    return checked.error();
  }
  tls.cert_file = resolve_path(tls.cert_file, base_dir);
  tls.key_file = resolve_path(tls.key_file, base_dir);
  tls.client_ca_file = resolve_path(tls.client_ca_file, base_dir);
  return std::optional<WebTlsConfig>(std::move(tls));
}

// One allowed response header: its value, refused when it could inject or is not allowed.
Result<void> read_header(const AllowedHeader& header, const YAML::Node& value, int line,
                         const std::string& key, WebConfig& config) {
  const Result<std::string> text = scalar(value, line, key);
  if (!text.ok()) return text.error();
  const std::string& v = text.value();
  // A line break would let the file inject headers of its own.
  if (v.find_first_of("\r\n") != std::string::npos) {
    return at(line, key + ": a header value cannot contain a line break");
  }
  if (v.empty()) return {};  // unset, as exporter-toolkit reads blank
  if (!header.values.empty() &&
      std::none_of(header.values.begin(), header.values.end(),
                   [&](std::string_view allowed) { return equals_ignoring_case(v, allowed); })) {
    return at(line, key + ": " + in_quotes(v) + " is not one of " + comma_list(header.values));
  }
  config.headers.emplace_back(std::string(header.name), v);
  return {};
}

Result<void> read_http(const YAML::Node& node, int line, WebConfig& config) {
  const std::string k = "http_server_config.";
  return read_section(
      node, "http_server_config", line,
      {
          {"http2", set_boolean(config.http2, k + "http2")},
          {"headers",
           [&](const YAML::Node& v, int l) -> Result<void> {
             if (v.IsNull()) return {};
             std::map<std::string_view, Reader> readers;
             for (const AllowedHeader& header : allowed_headers()) {
               readers[header.name] = [&config, &header, &k](const YAML::Node& hv, int hl) {
                 return read_header(header, hv, hl, k + "headers." + std::string(header.name),
                                    config);
               };
             }
             return read_section(v, k + "headers", l, readers);
           }},
      });
}

Result<void> read_users(const YAML::Node& node, int line, WebConfig& config) {
  if (node.IsNull()) return {};
  if (!node.IsMap()) return at(line, "basic_auth_users: expected a mapping of user: bcrypt hash");
  if (node.size() > kMaxUsers) {
    return at(line, "basic_auth_users: more than " + std::to_string(kMaxUsers) + " users");
  }
  for (auto it = node.begin(); it != node.end(); ++it) {
    const int user_line = line_of(it->first, line);
    if (!it->first.IsScalar()) {
      return at(user_line, "basic_auth_users: user names must be plain text");
    }
    const std::string user = it->first.Scalar();
    // Basic auth sends "user:password": a colon in the name could never match.
    if (user.empty() || user.find(':') != std::string::npos) {
      return at(user_line, "basic_auth_users: " + in_quotes(user) +
                               " is not a valid user name (non-empty, no colon)");
    }
    const Result<std::string> hash = scalar(it->second, user_line, "basic_auth_users." + user);
    if (!hash.ok()) return hash.error();
    // The hash is not repeated: it is a secret's stand-in, and logs are not the place for it.
    if (!is_bcrypt_hash(hash.value())) {
      return at(user_line, "basic_auth_users: user " + in_quotes(user) +
                               ": not a bcrypt hash (expected $2y$ or $2b$ and a cost, as "
                               "`htpasswd -nBC 10 user` prints)");
    }
    if (const int cost = std::stoi(hash.value().substr(4, 2)); cost > kMaxBcryptCost) {
      return at(user_line,
                "basic_auth_users: user " + in_quotes(user) + ": bcrypt cost " +
                    std::to_string(cost) + " is above " + std::to_string(kMaxBcryptCost) +
                    " (each check would take many seconds; htpasswd -B uses 5, exporters 10)");
    }
    if (!config.basic_auth_users.emplace(user, hash.value()).second) {
      return at(user_line, "basic_auth_users: duplicate user " + in_quotes(user));
    }
  }
  return {};
}

Result<void> read_rate_limit(const YAML::Node& node, int line, WebConfig& config) {
  bool burst_given = false;
  Result<void> read = read_section(
      node, "rate_limit", line,
      {
          {"interval",
           [&](const YAML::Node& v, int l) -> Result<void> {
             const Result<std::string> text = scalar(v, l, "rate_limit.interval");
             if (!text.ok()) return text.error();
             auto parsed = parse_duration(text.value());
             if (!parsed.ok()) return at(l, "rate_limit.interval: " + parsed.error().text);
             config.rate_limit_interval = parsed.value();
             return {};
           }},
          {"burst",
           [&](const YAML::Node& v, int l) -> Result<void> {
             const Result<std::string> text = scalar(v, l, "rate_limit.burst");
             if (!text.ok()) return text.error();
             const std::string& t = text.value();
             if (t.size() > 9 || !all_digits(t))
               return at(l, "rate_limit.burst: " + in_quotes(t) + " is not a whole number");
             config.rate_limit_burst = static_cast<unsigned>(std::stoul(t));
             burst_given = true;
             return {};
           }},
      });
  if (!read.ok()) return read;
  // A token bucket of size 0 refuses every request, which nobody means.
  if (config.rate_limit_interval.count() > 0 && config.rate_limit_burst == 0) {
    return at(line, burst_given ? "rate_limit.burst: must be at least 1 when interval is set"
                                : "rate_limit: interval needs a burst of at least 1");
  }
  return {};
}

}  // namespace

bool is_bcrypt_hash(std::string_view hash) {
  // $2a$, $2b$, $2y$ then a two-digit cost 04..31, "$", 22 characters of salt, 31 of hash.
  if (hash.size() != 60 || hash.substr(0, 2) != "$2" || hash[3] != '$' || hash[6] != '$') {
    return false;
  }
  if (hash[2] != 'a' && hash[2] != 'b' && hash[2] != 'y') return false;
  if (!std::isdigit(static_cast<unsigned char>(hash[4])) ||
      !std::isdigit(static_cast<unsigned char>(hash[5]))) {
    return false;
  }
  const int cost = (hash[4] - '0') * 10 + (hash[5] - '0');
  if (cost < 4 || cost > 31) return false;
  return std::all_of(hash.begin() + 7, hash.end(), [](char c) {
    return std::isalnum(static_cast<unsigned char>(c)) != 0 || c == '.' || c == '/';
  });
}

std::vector<std::string> web_config_warnings(const WebConfig& config) {
  std::vector<std::string> warnings;
  if (config.tls && config.tls->min_version < TlsVersion::TLS12) {
    warnings.push_back(std::string("tls_server_config.min_version ") +
                       tls_version_name(config.tls->min_version) +
                       " allows TLS 1.0 or 1.1, deprecated by RFC 8996 (TLS12 is the default)");
  }
  for (const auto& [user, hash] : config.basic_auth_users) {
    if (const int cost = std::stoi(hash.substr(4, 2)); cost < kLowBcryptCost) {
      warnings.push_back(control_bytes_escaped(
          "basic_auth_users: user " + in_quotes(user) + ": bcrypt cost " + std::to_string(cost) +
          " is below " + std::to_string(kLowBcryptCost) +
          ", cheap to crack if the file leaks (htpasswd -nBC 10 USER)"));
    }
  }
  return warnings;
}

const char* tls_version_name(TlsVersion version) { return name_of(kVersions, version).data(); }

Result<WebConfig> parse_web_config(std::string_view text, const std::string& name,
                                   const std::string& base_dir) {
  auto loaded = load_yaml_text(text, name);
  if (!loaded.ok()) return Error{control_bytes_escaped(loaded.error().text)};
  const YAML::Node& root = loaded.value();
  WebConfig config;
  if (!root.IsDefined() || root.IsNull()) return config;  // empty: plain HTTP, no auth
  Result<void> read;
  // yaml-cpp's node access throws on a malformed tree; the screen in load_yaml_text makes this
  // unlikely.
  try {
    if (!root.IsMap()) {
      read = at(line_of(root, 1),
                "expected a mapping of tls_server_config, http_server_config, basic_auth_users "
                "and rate_limit");
    } else {
      read = read_section(root, "", 1,
                          {
                              {"tls_server_config",
                               [&](const YAML::Node& v, int l) -> Result<void> {
                                 if (v.IsNull()) return {};
                                 Result<std::optional<WebTlsConfig>> tls = read_tls(v, l, base_dir);
                                 if (!tls.ok()) return tls.error();
                                 config.tls = std::move(tls.value());
                                 return {};
                               }},
                              {"http_server_config",
                               [&](const YAML::Node& v, int l) -> Result<void> {
                                 if (v.IsNull()) return {};
                                 return read_http(v, l, config);
                               }},
                              {"basic_auth_users", [&](const YAML::Node& v,
                                                       int l) { return read_users(v, l, config); }},
                              {"rate_limit",
                               [&](const YAML::Node& v, int l) -> Result<void> {
                                 if (v.IsNull()) return {};
                                 return read_rate_limit(v, l, config);
                               }},
                          });
    }
  } catch (const YAML::Exception& e) {
    read = at(e.mark.line >= 0 ? e.mark.line + 1 : 1, e.msg);
  }
  if (!read.ok()) return Error{control_bytes_escaped(name + ":" + read.error().text)};
  return config;
}

Result<WebConfig> load_web_config(const std::string& path) {
  const Result<std::string> text = read_regular_file(path, YamlLimits{}.max_bytes);
  if (!text.ok()) return cannot_read(path, "web config file", text.error());
  const std::string dir = std::filesystem::path(path).parent_path().string();
  return parse_web_config(text.value(), path, dir.empty() ? "." : dir);
}

}  // namespace hucprof
