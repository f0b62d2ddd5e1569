#include "core/quoted_value.h"

#include <limits>

#include "core/utf8.h"

namespace hucprof {

namespace {

void append_hex_escape(std::string& out, unsigned char c) {
  static constexpr char kHex[] = "0123456789abcdef";
  out += "\\x";
  out += kHex[c >> 4];
  out += kHex[c & 0xf];
}

// U+0080..U+009F: C1 controls, which some terminals act on (CSI is U+009B).
bool is_c1_control(std::string_view sequence) {
  return sequence.size() == 2 && static_cast<unsigned char>(sequence[0]) == 0xC2 &&
         static_cast<unsigned char>(sequence[1]) < 0xA0;
}

}  // namespace

std::string printable_text(std::string_view text, size_t max_bytes) {
  static constexpr std::string_view kCut = "…";
  std::string out;
  // The length of `out` when it last left room for the marker: where a cut text ends.
  size_t fits = 0;
  const size_t room = max_bytes > kCut.size() ? max_bytes - kCut.size() : 0;
  while (!text.empty()) {
    const size_t length = utf8_sequence_length(text);
    if (length == 0) {  // not UTF-8: the byte, never passed on raw
      append_hex_escape(out, static_cast<unsigned char>(text.front()));
      text.remove_prefix(1);
    } else {
      const std::string_view sequence = text.substr(0, length);
      const auto c = static_cast<unsigned char>(sequence.front());
      if ((length == 1 && (c < 0x20 || c == 0x7f)) || is_c1_control(sequence)) {
        for (const char byte : sequence) append_hex_escape(out, static_cast<unsigned char>(byte));
      } else {
        out += sequence;
      }
      text.remove_prefix(length);
    }
    if (out.size() <= room) fits = out.size();
    if (out.size() > max_bytes) {
      out.resize(fits);
      return out += kCut;
    }
  }
  return out;
}

std::string printable_text(std::string_view text) {
  return printable_text(text, std::numeric_limits<size_t>::max());
}

std::string quoted_value(std::string_view text) { return "\"" + printable_text(text) + "\""; }

}  // namespace hucprof
