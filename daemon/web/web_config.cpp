#include "web/web_config.h"

#include <algorithm>
#include <array>
#include <cctype>
#include <filesystem>
#include <functional>
#include <set>

#include "cli/duration.h"
#include "cli/named_values.h"
#include "cli/safe_yaml.h"
#include "core/file_text.h"
#include "core/message_text.h"

namespace hucprof {
namespace {

// Bounds far above any real web config and far below what costs memory.
constexpr size_t kMaxUsers = 1000;
constexpr size_t kMaxListItems = 1000;
// bcrypt doubles its work per cost step: cost 10 takes ~70 ms, 14 about a second. Above that
// one check holds the login thread (and a clean stop) for many seconds.
constexpr int kMaxBcryptCost = 14;
// Go's bcrypt.DefaultCost, what exporter-toolkit's documentation generates hashes with; below it
// a leaked hash is cheap to try passwords against.
constexpr int kLowBcryptCost = 10;

struct Invalid {
  int line;
  std::string words;
};

int line_of(const YAML::Node& node, int fallback) {
  const int line = node.Mark().line;
  return line >= 0 ? line + 1 : fallback;
}

// One mapping of the file: each known key is read by its own function, anything else is an
// error naming the key, as exporter-toolkit's strict unmarshalling does.
class Section {
 public:
  using Reader = std::function<void(const YAML::Node& value, int line)>;

  Section(const YAML::Node& node, std::string name, int line)
      : node_(node), name_(std::move(name)), line_(line_of(node, line)) {
    if (!node.IsMap()) {
      fail(line_, name_.empty() ? "expected a mapping of tls_server_config, http_server_config, "
                                  "basic_auth_users and rate_limit"
                                : name_ + ": expected a mapping of keys");
    }
  }

  void read(const std::map<std::string_view, Reader>& readers) const {
    std::set<std::string> seen;
    for (auto it = node_.begin(); it != node_.end(); ++it) {
      const int line = line_of(it->first, line_);
      if (!it->first.IsScalar()) fail(line, name_ + ": keys must be plain names");
      const std::string key = it->first.Scalar();
      const auto reader = readers.find(key);
      if (reader == readers.end()) {
        fail(line, "unknown key " + in_quotes(key) + (name_.empty() ? "" : " in " + name_));
      }
      if (!seen.insert(key).second) fail(line, "duplicate key " + in_quotes(key));
      reader->second(it->second, line);
    }
  }

  [[noreturn]] static void fail(int line, std::string words) {
    throw Invalid{line, std::move(words)};
  }

 private:
  const YAML::Node& node_;
  std::string name_;
  int line_;
};

std::string scalar(const YAML::Node& value, int line, const std::string& key) {
  if (value.IsNull()) return "";
  if (!value.IsScalar()) Section::fail(line, key + ": expected a single value");
  return value.Scalar();
}

Section::Reader set_text(std::string& into, std::string key) {
  return [&into, key = std::move(key)](const YAML::Node& v, int l) { into = scalar(v, l, key); };
}

bool boolean(const YAML::Node& value, int line, const std::string& key) {
  const std::string text = scalar(value, line, key);
  // YAML 1.1 spellings too, as Go's yaml.v2 reads them.
  if (const auto on = parse_boolean(text)) return *on;
  Section::fail(line, key + ": " + in_quotes(text) + " is not a boolean (true or false)");
}

std::vector<std::string> string_list(const YAML::Node& value, int line, const std::string& key) {
  if (value.IsNull()) return {};
  if (!value.IsSequence()) Section::fail(line, key + ": expected a list");
  if (value.size() > kMaxListItems) {
    Section::fail(line, key + ": more than " + std::to_string(kMaxListItems) + " items");
  }
  std::vector<std::string> items;
  for (const YAML::Node& item : value) items.push_back(scalar(item, line_of(item, line), key));
  return items;
}

template <typename T, size_t N>
T one_of(const std::string& text, const NamedValues<T, N>& choices, int line,
         const std::string& key) {
  auto found = find_named(choices, text);
  if (!found.ok()) Section::fail(line, key + ": " + found.error().text);
  return found.value();
}

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
void pick_one(const std::string& file, const std::string& text, const char* file_key,
              const char* text_key, int line) {
  if (!file.empty() && !text.empty()) {
    Section::fail(line, std::string("tls_server_config: ") + file_key + " and " + text_key +
                            " are two ways to give the same thing; set one");
  }
}

WebTlsConfig read_tls(const YAML::Node& node, int line, const std::string& base_dir,
                      bool& enabled) {
  WebTlsConfig tls;
  std::string client_auth_text;
  bool sans_given = false;
  const std::string k = "tls_server_config.";
  Section(node, "tls_server_config", line)
      .read({
          {"cert_file", set_text(tls.cert_file, k + "cert_file")},
          {"key_file", set_text(tls.key_file, k + "key_file")},
          {"client_ca_file", set_text(tls.client_ca_file, k + "client_ca_file")},
          {"cert", set_text(tls.cert, k + "cert")},
          {"key", set_text(tls.key, k + "key")},
          {"client_ca", set_text(tls.client_ca, k + "client_ca")},
          {"client_auth_type",
           [&](const YAML::Node& v, int l) {
             client_auth_text = scalar(v, l, k + "client_auth_type");
             if (!client_auth_text.empty()) {
               tls.client_auth = one_of(client_auth_text, kClientAuth, l, k + "client_auth_type");
             }
           }},
          {"client_allowed_sans",
           [&](const YAML::Node& v, int l) {
             tls.client_allowed_sans = string_list(v, l, k + "client_allowed_sans");
             sans_given = !v.IsNull();
           }},
          {"min_version",
           [&](const YAML::Node& v, int l) {
             tls.min_version =
                 one_of(scalar(v, l, k + "min_version"), kVersions, l, k + "min_version");
           }},
          {"max_version",
           [&](const YAML::Node& v, int l) {
             tls.max_version =
                 one_of(scalar(v, l, k + "max_version"), kVersions, l, k + "max_version");
           }},
          {"cipher_suites",
           [&](const YAML::Node& v, int l) {
             tls.cipher_suites = string_list(v, l, k + "cipher_suites");
           }},
          {"prefer_server_cipher_suites",
           [&](const YAML::Node& v, int l) {
             tls.prefer_server_cipher_suites = boolean(v, l, k + "prefer_server_cipher_suites");
           }},
          {"curve_preferences",
           [&](const YAML::Node& v, int l) {
             for (const std::string& curve : string_list(v, l, k + "curve_preferences")) {
               tls.curve_groups.emplace_back(one_of(curve, kCurves, l, k + "curve_preferences"));
             }
           }},
      });

  // As exporter-toolkit decides: TLS is on when any certificate, key, CA or client auth
  // policy is given (only versions or ciphers leave it off).
  enabled = !tls.cert_file.empty() || !tls.cert.empty() || !tls.key_file.empty() ||
            !tls.key.empty() || tls.has_client_ca() || !client_auth_text.empty();
  if (!enabled) return tls;
  pick_one(tls.cert_file, tls.cert, "cert_file", "cert", line);
  pick_one(tls.key_file, tls.key, "key_file", "key", line);
  pick_one(tls.client_ca_file, tls.client_ca, "client_ca_file", "client_ca", line);
  if (tls.cert_file.empty() && tls.cert.empty()) {
    Section::fail(line, "tls_server_config: missing cert_file (or cert)");
  }
  if (tls.key_file.empty() && tls.key.empty()) {
    Section::fail(line, "tls_server_config: missing key_file (or key)");
  }
  if (tls.min_version > tls.max_version) {
    Section::fail(line, std::string("tls_server_config: min_version ") +
                            tls_version_name(tls.min_version) + " is above max_version " +
                            tls_version_name(tls.max_version));
  }
  const bool verifies = tls.client_auth == ClientAuth::VerifyClientCertIfGiven ||
                        tls.client_auth == ClientAuth::RequireAndVerifyClientCert;
  if (tls.has_client_ca() && tls.client_auth == ClientAuth::NoClientCert) {
    Section::fail(line,
                  "tls_server_config: client_ca_file is set but client_auth_type is "
                  "NoClientCert (use RequireAndVerifyClientCert for mutual TLS)");
  }
  // Go falls back to the system's roots here; hucprof wants the CA that signs its scrapers.
  if (verifies && !tls.has_client_ca()) {
    Section::fail(line, "tls_server_config: client_auth_type " + client_auth_text +
                            " needs client_ca_file (the CA that signs the clients' certificates)");
  }
  if (sans_given && tls.client_auth != ClientAuth::RequireAnyClientCert &&
      tls.client_auth != ClientAuth::RequireAndVerifyClientCert) {
    Section::fail(line,
                  "tls_server_config: client_allowed_sans needs client_auth_type "
                  "RequireAnyClientCert or RequireAndVerifyClientCert (otherwise a client may "
                  "send no certificate to match)");
  }
  tls.cert_file = resolve_path(tls.cert_file, base_dir);
  tls.key_file = resolve_path(tls.key_file, base_dir);
  tls.client_ca_file = resolve_path(tls.client_ca_file, base_dir);
  return tls;
}

void read_http(const YAML::Node& node, int line, WebConfig& config) {
  const std::string k = "http_server_config.";
  Section(node, "http_server_config", line)
      .read({
          {"http2", [&](const YAML::Node& v, int l) { config.http2 = boolean(v, l, k + "http2"); }},
          {"headers",
           [&](const YAML::Node& v, int l) {
             if (v.IsNull()) return;
             Section(v, k + "headers", l).read([&] {
               std::map<std::string_view, Section::Reader> readers;
               for (const AllowedHeader& header : allowed_headers()) {
                 readers[header.name] = [&config, &header, &k](const YAML::Node& hv, int hl) {
                   const std::string key = k + "headers." + std::string(header.name);
                   const std::string value = scalar(hv, hl, key);
                   // A line break would let the file inject headers of its own.
                   if (value.find_first_of("\r\n") != std::string::npos) {
                     Section::fail(hl, key + ": a header value cannot contain a line break");
                   }
                   if (value.empty()) return;  // unset, as exporter-toolkit reads blank
                   if (!header.values.empty() &&
                       std::none_of(header.values.begin(), header.values.end(),
                                    [&](std::string_view allowed) {
                                      return equals_ignoring_case(value, allowed);
                                    })) {
                     Section::fail(hl, key + ": " + in_quotes(value) + " is not one of " +
                                           comma_list(header.values));
                   }
                   config.headers.emplace_back(std::string(header.name), value);
                 };
               }
               return readers;
             }());
           }},
      });
}

void read_users(const YAML::Node& node, int line, WebConfig& config) {
  if (node.IsNull()) return;
  if (!node.IsMap())
    Section::fail(line, "basic_auth_users: expected a mapping of user: bcrypt hash");
  if (node.size() > kMaxUsers) {
    Section::fail(line, "basic_auth_users: more than " + std::to_string(kMaxUsers) + " users");
  }
  for (auto it = node.begin(); it != node.end(); ++it) {
    const int user_line = line_of(it->first, line);
    if (!it->first.IsScalar())
      Section::fail(user_line, "basic_auth_users: user names must be plain text");
    const std::string user = it->first.Scalar();
    // Basic auth sends "user:password": a colon in the name could never match.
    if (user.empty() || user.find(':') != std::string::npos) {
      Section::fail(user_line, "basic_auth_users: " + in_quotes(user) +
                                   " is not a valid user name (non-empty, no colon)");
    }
    const std::string hash = scalar(it->second, user_line, "basic_auth_users." + user);
    // The hash is not repeated: it is a secret's stand-in, and logs are not the place for it.
    if (!is_bcrypt_hash(hash)) {
      Section::fail(user_line, "basic_auth_users: user " + in_quotes(user) +
                                   ": not a bcrypt hash (expected $2y$ or $2b$ and a cost, as "
                                   "`htpasswd -nBC 10 user` prints)");
    }
    if (const int cost = std::stoi(hash.substr(4, 2)); cost > kMaxBcryptCost) {
      Section::fail(user_line,
                    "basic_auth_users: user " + in_quotes(user) + ": bcrypt cost " +
                        std::to_string(cost) + " is above " + std::to_string(kMaxBcryptCost) +
                        " (each check would take many seconds; htpasswd -B uses 5, exporters 10)");
    }
    if (!config.basic_auth_users.emplace(user, hash).second) {
      Section::fail(user_line, "basic_auth_users: duplicate user " + in_quotes(user));
    }
  }
}

void read_rate_limit(const YAML::Node& node, int line, WebConfig& config) {
  bool burst_given = false;
  Section(node, "rate_limit", line)
      .read({
          {"interval",
           [&](const YAML::Node& v, int l) {
             auto parsed = parse_duration(scalar(v, l, "rate_limit.interval"));
             if (!parsed.ok()) Section::fail(l, "rate_limit.interval: " + parsed.error().text);
             config.rate_limit_interval = parsed.value();
           }},
          {"burst",
           [&](const YAML::Node& v, int l) {
             const std::string text = scalar(v, l, "rate_limit.burst");
             const bool digits = !text.empty() && text.size() <= 9 &&
                                 std::all_of(text.begin(), text.end(), [](char c) {
                                   return std::isdigit(static_cast<unsigned char>(c)) != 0;
                                 });
             if (!digits)
               Section::fail(l, "rate_limit.burst: " + in_quotes(text) + " is not a whole number");
             config.rate_limit_burst = static_cast<unsigned>(std::stoul(text));
             burst_given = true;
           }},
      });
  // A token bucket of size 0 refuses every request, which nobody means.
  if (config.rate_limit_interval.count() > 0 && config.rate_limit_burst == 0) {
    Section::fail(line, burst_given ? "rate_limit.burst: must be at least 1 when interval is set"
                                    : "rate_limit: interval needs a burst of at least 1");
  }
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
  try {
    Section(root, "", 1)
        .read({
            {"tls_server_config",
             [&](const YAML::Node& v, int l) {
               if (v.IsNull()) return;
               bool enabled = false;
               WebTlsConfig tls = read_tls(v, l, base_dir, enabled);
               if (enabled) config.tls = std::move(tls);
             }},
            {"http_server_config",
             [&](const YAML::Node& v, int l) {
               if (!v.IsNull()) read_http(v, l, config);
             }},
            {"basic_auth_users", [&](const YAML::Node& v, int l) { read_users(v, l, config); }},
            {"rate_limit",
             [&](const YAML::Node& v, int l) {
               if (!v.IsNull()) read_rate_limit(v, l, config);
             }},
        });
  } catch (const Invalid& invalid) {
    return Error{
        control_bytes_escaped(name + ":" + std::to_string(invalid.line) + ": " + invalid.words)};
  } catch (const YAML::Exception& e) {
    // Node access on a malformed tree; the screen in load_yaml_text makes this unlikely.
    return Error{control_bytes_escaped(
        name + ":" + std::to_string(e.mark.line >= 0 ? e.mark.line + 1 : 1) + ": " + e.msg)};
  }
  return config;
}

Result<WebConfig> load_web_config(const std::string& path) {
  const Result<std::string> text = read_regular_file(path, YamlLimits{}.max_bytes);
  if (!text.ok()) return cannot_read(path, "web config file", text.error());
  const std::string dir = std::filesystem::path(path).parent_path().string();
  return parse_web_config(text.value(), path, dir.empty() ? "." : dir);
}

}  // namespace hucprof
