#include "web_input/basic_auth.h"

#include <crypt.h>
#include <openssl/crypto.h>
#include <openssl/evp.h>

#include <algorithm>
#include <array>
#include <memory>

#include "web_input/http_text.h"

namespace hucprof {
namespace {

int base64_value(char c) {
  if (c >= 'A' && c <= 'Z') return c - 'A';
  if (c >= 'a' && c <= 'z') return c - 'a' + 26;
  if (c >= '0' && c <= '9') return c - '0' + 52;
  if (c == '+') return 62;
  if (c == '/') return 63;
  return -1;
}

// A valid bcrypt hash (crypt_blowfish's own test vector) whose cost prefix is replaced by the
// configured users' cost: checking an unknown user against it costs what a real check costs.
constexpr std::string_view kDecoySaltAndHash =
    "CCCCCCCCCCCCCCCCCCCCC.E5YPO9kmyuRGyh0XouQYb4YMJKvyOeW";

}  // namespace

std::optional<std::string> base64_decode(std::string_view text) {
  while (!text.empty() && text.back() == '=') text.remove_suffix(1);
  if (text.size() % 4 == 1) return std::nullopt;
  std::string out;
  out.reserve(text.size() * 3 / 4);
  unsigned buffer = 0;
  int bits = 0;
  for (char c : text) {
    const int value = base64_value(c);
    if (value < 0) return std::nullopt;
    buffer = (buffer << 6) | static_cast<unsigned>(value);
    bits += 6;
    if (bits >= 8) {
      bits -= 8;
      out.push_back(static_cast<char>((buffer >> bits) & 0xff));
    }
  }
  return out;
}

std::optional<BasicCredentials> parse_basic_authorization(std::string_view header) {
  header = trim_ows(header);
  constexpr std::string_view kScheme = "basic";
  if (header.size() <= kScheme.size() || !starts_with_ignoring_case(header, kScheme) ||
      (header[kScheme.size()] != ' ' && header[kScheme.size()] != '\t')) {
    return std::nullopt;
  }
  const auto decoded = base64_decode(trim_ows(header.substr(kScheme.size())));
  if (!decoded) return std::nullopt;
  const size_t colon = decoded->find(':');
  if (colon == std::string::npos) return std::nullopt;
  return BasicCredentials{decoded->substr(0, colon), decoded->substr(colon + 1)};
}

bool bcrypt_matches(const std::string& hash, std::string_view password) {
  // crypt_r reads a C string: a NUL would end the password early and match a shorter one.
  if (password.find('\0') != std::string_view::npos) return false;
  // crypt_data is ~32 KiB: not for a thread's stack.
  auto data = std::make_unique<crypt_data>();
  const std::string key(password);
  const char* result = crypt_r(key.c_str(), hash.c_str(), data.get());
  if (result == nullptr || result[0] == '*') return false;
  const std::string_view computed(result);
  return computed.size() == hash.size() &&
         CRYPTO_memcmp(computed.data(), hash.data(), hash.size()) == 0;
}

BasicAuthenticator::BasicAuthenticator(std::map<std::string, std::string> users)
    : users_(std::move(users)) {
  const std::string prefix = users_.empty() ? "$2y$10$" : users_.begin()->second.substr(0, 7);
  decoy_hash_ = prefix + std::string(kDecoySaltAndHash);
}

std::string BasicAuthenticator::cache_key(const BasicCredentials& credentials) const {
  const auto user = users_.find(credentials.user);
  // The hash is part of the key, so a changed hash never meets an old entry.
  std::string material = credentials.user;
  material.push_back('\0');
  material += user == users_.end() ? "" : user->second;
  material.push_back('\0');
  material += credentials.password;
  std::array<unsigned char, EVP_MAX_MD_SIZE> digest{};
  unsigned length = 0;
  EVP_Digest(material.data(), material.size(), digest.data(), &length, EVP_sha256(), nullptr);
  OPENSSL_cleanse(material.data(), material.size());
  return std::string(reinterpret_cast<const char*>(digest.data()), length);
}

bool BasicAuthenticator::cached(const BasicCredentials& credentials, Clock::time_point now) {
  if (users_.find(credentials.user) == users_.end()) return false;
  const std::string key = cache_key(credentials);
  std::lock_guard lock(mutex_);
  const auto it = verified_.find(key);
  if (it == verified_.end()) return false;
  if (it->second <= now) {
    verified_.erase(it);
    return false;
  }
  return true;
}

bool BasicAuthenticator::verify(const BasicCredentials& credentials, Clock::time_point now) {
  const auto user = users_.find(credentials.user);
  const bool known = user != users_.end();
  const bool match = bcrypt_matches(known ? user->second : decoy_hash_, credentials.password);
  if (!known || !match) return false;
  const std::string key = cache_key(credentials);
  std::lock_guard lock(mutex_);
  if (verified_.size() >= kCacheEntries) {
    std::erase_if(verified_, [now](const auto& entry) { return entry.second <= now; });
    // Still full: forget the entry closest to expiry (the cost is one more bcrypt later).
    if (verified_.size() >= kCacheEntries) {
      verified_.erase(
          std::min_element(verified_.begin(), verified_.end(),
                           [](const auto& a, const auto& b) { return a.second < b.second; }));
    }
  }
  verified_[key] = now + kCacheTtl;
  return true;
}

}  // namespace hucprof
