#pragma once
#include <cctype>
#include <string_view>

#include "core/named_values.h"  // equals_ignoring_case

namespace hucprof {

// Pieces of HTTP header values and targets (RFC 9110 5.6): optional whitespace is spaces and
// tabs, and tokens (auth schemes, content codings, URI schemes) compare case-insensitively.

inline std::string_view trim_ows(std::string_view text) {
  while (!text.empty() && (text.front() == ' ' || text.front() == '\t')) text.remove_prefix(1);
  while (!text.empty() && (text.back() == ' ' || text.back() == '\t')) text.remove_suffix(1);
  return text;
}

// `lower_prefix` is lower case already.
inline bool starts_with_ignoring_case(std::string_view text, std::string_view lower_prefix) {
  if (text.size() < lower_prefix.size()) return false;
  for (size_t i = 0; i < lower_prefix.size(); ++i) {
    if (std::tolower(static_cast<unsigned char>(text[i])) != lower_prefix[i]) return false;
  }
  return true;
}

}  // namespace hucprof
