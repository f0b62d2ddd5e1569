#pragma once
#include <chrono>
#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>

namespace hucprof {

struct BasicCredentials {
  std::string user;
  std::string password;
};

// The credentials of an "Authorization: Basic <base64(user:password)>" header (RFC 7617);
// nullopt when the header is another scheme or malformed. Pure, fuzzed.
std::optional<BasicCredentials> parse_basic_authorization(std::string_view header);

// Strict RFC 4648 base64 (padding optional); nullopt on any other character.
std::optional<std::string> base64_decode(std::string_view text);

// Whether `password` hashes to `hash` ($2y$/$2b$/$2a$ bcrypt) through libcrypt's crypt_r,
// compared in constant time. Slow on purpose (cost 10: ~50-100 ms).
bool bcrypt_matches(const std::string& hash, std::string_view password);

// basic_auth_users of the web config, checked the way exporter-toolkit checks them: a bcrypt per
// first use of a user/password pair, then a short-lived cache, so a scrape every few seconds
// does not cost a bcrypt each. The cache keys are SHA-256 digests, never the passwords, and a
// new web config gets a new authenticator (a removed user is locked out at once).
class BasicAuthenticator {
 public:
  using Clock = std::chrono::steady_clock;
  static constexpr std::chrono::minutes kCacheTtl{5};
  static constexpr size_t kCacheEntries = 128;

  explicit BasicAuthenticator(std::map<std::string, std::string> users);

  bool enabled() const { return !users_.empty(); }
  // True when these credentials were verified within kCacheTtl: no bcrypt needed.
  bool cached(const BasicCredentials& credentials, Clock::time_point now = Clock::now());
  // The slow check (one bcrypt, also for unknown users so their answer takes as long);
  // remembers a success.
  bool verify(const BasicCredentials& credentials, Clock::time_point now = Clock::now());

 private:
  std::string cache_key(const BasicCredentials& credentials) const;

  std::map<std::string, std::string> users_;
  std::string decoy_hash_;  // same cost as the real hashes, for unknown users
  std::mutex mutex_;
  std::unordered_map<std::string, Clock::time_point> verified_;  // key -> expiry
};

}  // namespace hucprof
