#pragma once
#include <cctype>
#include <string>

namespace hucprof {

// Messages are lowercase, one line; library texts ("No such file or directory") start with a
// capital, so they are lowered before being appended.
inline std::string lowercase_first(std::string text) {
  if (!text.empty()) text[0] = static_cast<char>(std::tolower(static_cast<unsigned char>(text[0])));
  return text;
}

// Messages quote what the user gave (a flag value, a YAML key), which may hold a newline or a
// terminal escape; printed as is, "one line on stderr" would no longer hold. Control characters
// become visible escapes: "pro\nbe", "\x1b[31m".
inline std::string on_one_line(const std::string& text) {
  static constexpr char kHex[] = "0123456789abcdef";
  std::string out;
  out.reserve(text.size());
  for (const char c : text) {
    const auto byte = static_cast<unsigned char>(c);
    if (c == '\n') {
      out += "\\n";
    } else if (c == '\t') {
      out += "\\t";
    } else if (c == '\r') {
      out += "\\r";
    } else if (byte < 0x20 || byte == 0x7f) {
      out += "\\x";
      out += kHex[byte >> 4];
      out += kHex[byte & 0xf];
    } else {
      out += c;
    }
  }
  return out;
}

}  // namespace hucprof
