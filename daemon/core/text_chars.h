#pragma once

namespace hucprof {

// The blanks that separate fields of the kernel's and Prometheus' text formats (kallsyms,
// the exposition format): spaces and tabs, never newlines.
constexpr bool is_blank(char c) { return c == ' ' || c == '\t'; }

}  // namespace hucprof
