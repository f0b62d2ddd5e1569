#pragma once
#include <cctype>
#include <string_view>

#include "core/base/named_values.h"  // equals_ignoring_case
#include "core/base/text_chars.h"    // is_blank: RFC 9110's OWS is spaces and tabs too

namespace hucprof {

// Pieces of HTTP header values and targets (RFC 9110 5.6): optional whitespace is spaces and
// tabs, and tokens (auth schemes, content codings, URI schemes) compare case-insensitively.

inline std::string_view trim_ows(std::string_view text) {
  while (!text.empty() && is_blank(text.front())) text.remove_prefix(1);
  while (!text.empty() && is_blank(text.back())) text.remove_suffix(1);
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
