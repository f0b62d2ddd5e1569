#pragma once
#include <string_view>

namespace hucprof {

// The blanks that separate fields of the kernel's and Prometheus' text formats (kallsyms,
// the exposition format): spaces and tabs, never newlines.
constexpr bool is_blank(char c) { return c == ' ' || c == '\t'; }

// ASCII digits only, whatever the locale (std::isdigit asks it).
constexpr bool is_digit(char c) { return c >= '0' && c <= '9'; }

// A non-empty run of ASCII digits.
constexpr bool all_digits(std::string_view s) {
  if (s.empty()) return false;
  for (char c : s) {
    if (!is_digit(c)) return false;
  }
  return true;
}

}  // namespace hucprof
