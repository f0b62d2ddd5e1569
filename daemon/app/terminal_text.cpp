#include "app/terminal_text.h"

#include <algorithm>
#include <cstdarg>
#include <cstdio>
#include <cstring>
#include <string>
#include <string_view>

#include "core/base/quoted_value.h"

namespace hucprof {

namespace {

// `format` formatted with each of its line breaks written `own_break`.
std::string formatted(const char* format, char own_break, va_list args) {
  std::string own(format);
  std::replace(own.begin(), own.end(), '\n', own_break);
  va_list sizing;
  va_copy(sizing, args);
  const int n = std::vsnprintf(nullptr, 0, own.c_str(), sizing);
  va_end(sizing);
  if (n < 0) return {};
  std::string text(static_cast<size_t>(n) + 1, '\0');
  va_list writing;
  va_copy(writing, args);
  std::vsnprintf(text.data(), text.size(), own.c_str(), writing);
  va_end(writing);
  text.resize(static_cast<size_t>(n));
  return text;
}

}  // namespace

void print_text(const char* format, ...) {
  va_list args;
  va_start(args, format);
  const auto breaks = std::count(format, format + std::strlen(format), '\n');
  std::string out;
  bool printed = false;
  // A control byte no argument holds stands for the format's line breaks while it is
  // formatted, so that one inside an argument (a path holding "\n") is shown escaped. Only a
  // hostile argument holds any of them; one holding all is printed as one escaped line.
  for (char own_break = '\x1f'; own_break >= '\x01' && !printed; --own_break) {
    if (own_break == '\n') continue;
    const std::string text = formatted(format, own_break, args);
    if (std::count(text.begin(), text.end(), own_break) != breaks) continue;
    std::string_view rest = text;
    for (;;) {
      const size_t end = rest.find(own_break);
      out += printable_text(rest.substr(0, end));
      if (end == std::string_view::npos) break;
      out += '\n';
      rest.remove_prefix(end + 1);
    }
    printed = true;
  }
  if (!printed) out = printable_text(formatted(format, '\n', args)) + "\n";
  va_end(args);
  std::fwrite(out.data(), 1, out.size(), stdout);
}

}  // namespace hucprof
