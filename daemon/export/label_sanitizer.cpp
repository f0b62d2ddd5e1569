#include "export/label_sanitizer.h"

#include <cctype>
#include <cstddef>
#include <cstdint>

namespace hucprof {
namespace {

bool is_hex(char c) { return std::isxdigit(static_cast<unsigned char>(c)) != 0; }

// x86_64 kernel addresses live in the top half: 16 hex digits starting with ffff. Printed
// without leading zeros they are still ≥ 13 digits, so shorter runs (offsets, error codes) pass.
bool looks_like_kernel_address(std::string_view hex) {
  if (hex.size() < 13 || hex.size() > 16) return false;
  for (size_t i = 0; i < 4; ++i) {
    if (std::tolower(static_cast<unsigned char>(hex[i])) != 'f') return false;
  }
  return true;
}

std::string redact_addresses(std::string_view in) {
  std::string out;
  out.reserve(in.size());
  size_t i = 0;
  while (i < in.size()) {
    // Only a maximal hex run can be an address: "abcffff…" is a different token.
    if (i == 0 || !is_hex(in[i - 1])) {
      size_t digits = i;
      if (in.size() - i > 2 && in[i] == '0' && (in[i + 1] == 'x' || in[i + 1] == 'X')) digits += 2;
      size_t end = digits;
      while (end < in.size() && is_hex(in[end])) ++end;
      if (looks_like_kernel_address(in.substr(digits, end - digits))) {
        out += kRedactedAddress;
        i = end;
        continue;
      }
    }
    out += in[i++];
  }
  return out;
}

// Length of the valid UTF-8 sequence starting at s[0] (RFC 3629: no overlongs, no surrogates,
// nothing above U+10FFFF), or 0 if it is not one.
size_t valid_utf8_length(std::string_view s) {
  const auto b = [&](size_t i) { return static_cast<uint8_t>(s[i]); };
  const auto cont = [&](size_t i) { return i < s.size() && (b(i) & 0xC0) == 0x80; };
  const uint8_t c = b(0);
  if (c < 0x80) return 1;
  if (c >= 0xC2 && c <= 0xDF) return cont(1) ? 2 : 0;
  if (c >= 0xE0 && c <= 0xEF) {
    if (!cont(1) || !cont(2)) return 0;
    if (c == 0xE0 && b(1) < 0xA0) return 0;   // overlong
    if (c == 0xED && b(1) >= 0xA0) return 0;  // UTF-16 surrogate
    return 3;
  }
  if (c >= 0xF0 && c <= 0xF4) {
    if (!cont(1) || !cont(2) || !cont(3)) return 0;
    if (c == 0xF0 && b(1) < 0x90) return 0;   // overlong
    if (c == 0xF4 && b(1) >= 0x90) return 0;  // above U+10FFFF
    return 4;
  }
  return 0;
}

std::string repair_utf8(std::string_view in) {
  std::string out;
  out.reserve(in.size());
  while (!in.empty()) {
    const size_t n = valid_utf8_length(in);
    if (n == 0) {
      out += "\xEF\xBF\xBD";  // U+FFFD REPLACEMENT CHARACTER
      in.remove_prefix(1);
    } else {
      out.append(in.substr(0, n));
      in.remove_prefix(n);
    }
  }
  return out;
}

}  // namespace

std::string sanitize_label_value(std::string_view value) {
  return repair_utf8(redact_addresses(value));
}

}  // namespace hucprof
