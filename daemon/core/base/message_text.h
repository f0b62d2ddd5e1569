#pragma once
#include <cctype>
#include <cstring>
#include <string>
#include <string_view>

#include "core/base/quoted_value.h"
#include "core/base/result.h"

namespace hucprof {

// Messages are lowercase, one line; library texts ("No such file or directory") start with a
// capital, so they are lowered before being appended.
inline std::string lowercase_first(std::string text) {
  if (!text.empty()) text[0] = static_cast<char>(std::tolower(static_cast<unsigned char>(text[0])));
  return text;
}

// A file read_regular_file refused, as one line naming it: "PATH: cannot read WHAT: reason"
// (what: "config file", "web config file", "tls_server_config.cert_file").
inline Error cannot_read(const std::string& path, std::string_view what, const Error& why) {
  return {path + ": cannot read " + std::string(what) + ": " + lowercase_first(why.text),
          why.exit_code};
}

// strerror's words for an errno value, of either sign (libbpf returns them negated).
inline std::string errno_text(int err) { return std::strerror(err < 0 ? -err : err); }

// What the user gave, in double quotes, inside a message that is made one line as a whole
// (on_one_line, control_bytes_escaped) once it is complete.
inline std::string in_quotes(std::string_view value) { return "\"" + std::string(value) + "\""; }

// core/base/quoted_value's escaping without its quotes, for a whole message: every control byte
// as \xNN ("tls\x0aserver").
inline std::string control_bytes_escaped(std::string_view text) { return printable_text(text); }

// Messages quote what the user gave (a flag value, a YAML key), which may hold a newline or a
// terminal escape; printed as is, "one line on stderr" would no longer hold. Line breaks and
// tabs read as C escapes, other control characters as control_bytes_escaped does:
// "pro\nbe", "\x1b[31m".
inline std::string on_one_line(std::string_view text) {
  std::string out;
  for (;;) {
    const size_t cut = text.find_first_of("\n\t\r");
    out += control_bytes_escaped(text.substr(0, cut));
    if (cut == std::string_view::npos) return out;
    out += text[cut] == '\n' ? "\\n" : text[cut] == '\t' ? "\\t" : "\\r";
    text.remove_prefix(cut + 1);
  }
}

}  // namespace hucprof
