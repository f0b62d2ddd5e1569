#pragma once
#include <cstddef>
#include <limits>
#include <string>
#include <string_view>

namespace hucprof {

// `text` with control bytes (C0, DEL, C1), the noncharacters U+FFFE and U+FFFF (which XML 1.0
// forbids) and bytes that are not UTF-8 written \xNN (as systemd-escape writes them): valid
// UTF-8 on one line that carries no terminal sequences, fit for a message, a terminal, a pprof
// string or (entities added) XML and HTML, whatever bytes came from outside. Longer than
// `max_bytes` once escaped, it is cut after a whole character or escape and ends in "…"
// (U+2026, 3 bytes).
std::string printable_text(std::string_view text,
                           size_t max_bytes = std::numeric_limits<size_t>::max());

// The most bytes a name from outside (a function or file from DWARF or a profile, a module, a
// cgroup, pod or command, a path, a label) takes wherever hucprof shows or writes it, escapes
// included: a kernel symbol has at most 511 (KSYM_NAME_LEN), and `report` refuses a profile
// whose names are longer, so what hucprof writes it also reads back.
inline constexpr size_t kMaxNameBytes = 1024;

// A name from outside for a terminal (`report`) or a pprof string (pprof's own tools print
// them on one): printable_text bounded to kMaxNameBytes. HTML and SVG add their entities to it
// (export/views/markup_escape.h), Prometheus labels their redaction
// (export/metrics/label_sanitizer.h).
inline std::string printable_name(std::string_view name) {
  return printable_text(name, kMaxNameBytes);
}

// A value from outside (a flag, a file), printable_text in double quotes, for an error message.
std::string quoted_value(std::string_view text);

}  // namespace hucprof
