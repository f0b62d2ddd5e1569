#include "core/symbols/symbol_name.h"

#include <array>

#include "core/base/text_chars.h"

namespace hucprof {
namespace {

// GCC and Clang clone or split a function and name the copy after the original plus a tag.
// Tags that always carry a number after them.
constexpr std::array<std::string_view, 6> kNumberedTags = {"part", "isra",  "constprop",
                                                           "llvm", "clone", "lto_priv"};
// Tags that may end the name bare (".cold") or carry a number (".cold.1", older GCC).
constexpr std::array<std::string_view, 2> kBareTags = {"cold", "localalias"};

bool is_tag(std::string_view tag, bool numbered) {
  for (std::string_view t : kNumberedTags) {
    if (numbered && tag == t) return true;
  }
  for (std::string_view t : kBareTags) {
    if (tag == t) return true;
  }
  return false;
}

// Removes one trailing suffix, or returns the name unchanged. Stripping from the end one tag at a
// time handles any chain (".isra.0.cold", ".constprop.0.isra.0") without a grammar, and leaves
// dots that are not compiler tags alone.
std::string_view strip_one(std::string_view name) {
  size_t dot = name.rfind('.');
  if (dot == std::string_view::npos || dot == 0) return name;
  std::string_view last = name.substr(dot + 1);
  if (all_digits(last)) {
    size_t tag_dot = name.rfind('.', dot - 1);
    if (tag_dot == std::string_view::npos || tag_dot == 0) return name;
    if (is_tag(name.substr(tag_dot + 1, dot - tag_dot - 1), /*numbered=*/true)) {
      return name.substr(0, tag_dot);
    }
    return name;
  }
  if (is_tag(last, /*numbered=*/false)) return name.substr(0, dot);
  return name;
}

}  // namespace

std::string_view normalize_symbol(std::string_view exact) {
  std::string_view name = exact;
  for (;;) {
    std::string_view shorter = strip_one(name);
    if (shorter.size() == name.size()) return name;
    name = shorter;
  }
}

}  // namespace hucprof
