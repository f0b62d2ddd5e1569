#include "export/metrics/label_sanitizer.h"

#include <cctype>
#include <cstddef>

#include "core/base/quoted_value.h"

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

}  // namespace

std::string sanitize_label_value(std::string_view value) {
  return printable_name(redact_addresses(value));
}

}  // namespace hucprof
