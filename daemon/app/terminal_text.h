#pragma once

namespace hucprof {

// printf to stdout for what a command prints for people (`doctor`): every line made printable
// (core/base/quoted_value.h's printable_text) before it is written, so a symbol from a module, a
// debuginfo path or a reason quoting one can neither act on the terminal nor break a line:
// the line breaks of `format` are kept, an argument's read \x0a.
[[gnu::format(printf, 1, 2)]] void print_text(const char* format, ...);

}  // namespace hucprof
