#include "export/views/markup_escape.h"

#include "core/base/quoted_value.h"

namespace hucprof {

std::string markup_escape(std::string_view text) {
  const std::string printable = printable_name(text);
  std::string out;
  out.reserve(printable.size());
  for (char c : printable) {
    switch (c) {
      case '&':
        out += "&amp;";
        break;
      case '<':
        out += "&lt;";
        break;
      case '>':
        out += "&gt;";
        break;
      case '"':
        out += "&quot;";
        break;
      case '\'':
        out += "&#39;";
        break;
      default:
        out += c;
    }
  }
  return out;
}

}  // namespace hucprof
