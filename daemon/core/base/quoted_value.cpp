#include "core/base/quoted_value.h"

#include "core/base/utf8.h"

namespace hucprof {

namespace {

constexpr std::string_view kCutMark = "…";  // U+2026, 3 bytes

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

// U+FFFE and U+FFFF: valid UTF-8, but no character, and not allowed in an XML document.
bool is_noncharacter(std::string_view sequence) {
  return sequence == "\xEF\xBF\xBE" || sequence == "\xEF\xBF\xBF";
}

// Appends the first character of `text` as printable_text writes it and removes it.
void append_printable(std::string& out, std::string_view& text) {
  const size_t length = utf8_sequence_length(text);
  if (length == 0) {  // not UTF-8: the byte, never passed on raw
    append_hex_escape(out, static_cast<unsigned char>(text.front()));
    text.remove_prefix(1);
    return;
  }
  const std::string_view sequence = text.substr(0, length);
  const auto c = static_cast<unsigned char>(sequence.front());
  if ((length == 1 && (c < 0x20 || c == 0x7f)) || is_c1_control(sequence) ||
      is_noncharacter(sequence)) {
    for (const char byte : sequence) append_hex_escape(out, static_cast<unsigned char>(byte));
  } else {
    out += sequence;
  }
  text.remove_prefix(length);
}

}  // namespace

std::string printable_text(std::string_view text, size_t max_bytes) {
  std::string out;
  size_t fits = 0;  // where to cut: after the last whole piece that leaves room for the mark
  while (!text.empty()) {
    if (out.size() + kCutMark.size() <= max_bytes) fits = out.size();
    append_printable(out, text);
    if (out.size() > max_bytes) {
      out.resize(fits);
      return out.append(kCutMark);
    }
  }
  return out;
}

std::string quoted_value(std::string_view text) { return "\"" + printable_text(text) + "\""; }

}  // namespace hucprof
