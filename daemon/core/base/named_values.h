#pragma once
#include <algorithm>
#include <array>
#include <cctype>
#include <optional>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>

#include "core/base/message_text.h"
#include "core/base/result.h"

namespace hucprof {

// A closed set of values spelled by name (--mode, --probe.attach, the web config's
// client_auth_type): one table that both the parser and the printer read, so they cannot drift.
template <typename T, size_t N>
using NamedValues = std::array<std::pair<std::string_view, T>, N>;

// "auto, probe, sample": for "is not one of" messages and --help.
template <typename Names>
std::string comma_list(const Names& names) {
  std::string list;
  for (const auto& entry : names) {
    if (!list.empty()) list += ", ";
    if constexpr (std::is_convertible_v<decltype(entry), std::string_view>) {
      list += entry;
    } else {
      list += entry.first;
    }
  }
  return list;
}

// The value named `name`, or what is wrong in words: `"x" is not one of auto, probe, sample`.
template <typename T, size_t N>
Result<T> find_named(const NamedValues<T, N>& table, std::string_view name) {
  for (const auto& [spelling, value] : table) {
    if (spelling == name) return value;
  }
  return Error{in_quotes(name) + " is not one of " + comma_list(table)};
}

// The first name `value` has in the table (a later entry may be an alias).
template <typename T, size_t N>
std::string_view name_of(const NamedValues<T, N>& table, T value) {
  for (const auto& [spelling, entry] : table) {
    if (entry == value) return spelling;
  }
  return table.front().first;
}

inline bool equals_ignoring_case(std::string_view a, std::string_view b) {
  return a.size() == b.size() && std::equal(a.begin(), a.end(), b.begin(), [](char x, char y) {
           return std::tolower(static_cast<unsigned char>(x)) ==
                  std::tolower(static_cast<unsigned char>(y));
         });
}

// A boolean as YAML 1.1 (and Go's yaml.v2) spells it, in any case: true/yes/on, false/no/off.
inline std::optional<bool> parse_boolean(std::string_view text) {
  for (const char* yes : {"true", "yes", "on"}) {
    if (equals_ignoring_case(text, yes)) return true;
  }
  for (const char* no : {"false", "no", "off"}) {
    if (equals_ignoring_case(text, no)) return false;
  }
  return std::nullopt;
}

}  // namespace hucprof
