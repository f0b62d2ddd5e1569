#pragma once
#include <cstddef>
#include <string>
#include <string_view>

namespace hucprof {

// `text` with control bytes (C0, DEL, C1) and bytes that are not UTF-8 written \xNN (as
// systemd-escape writes them): valid UTF-8 on one line that carries no terminal sequences, fit
// for a label value or a message whatever bytes came from outside.
std::string printable_text(std::string_view text);
// The same, at most max_bytes of it (max_bytes >= 3): a longer text is cut after a whole
// character or escape and ends in "…" (U+2026), so a name from a file stays a name.
std::string printable_text(std::string_view text, size_t max_bytes);

// A value from outside (a flag, a file), printable_text in double quotes, for an error message.
std::string quoted_value(std::string_view text);

}  // namespace hucprof
