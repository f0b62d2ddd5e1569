#pragma once
#include <string>
#include <string_view>

namespace hucprof {

// A value from outside (a flag, a file), in double quotes, for an error message: control bytes
// (C0, DEL, C1) and bytes that are not UTF-8 come back as \xNN, so the message stays on one
// line of valid UTF-8 and cannot carry terminal sequences.
std::string quoted_value(std::string_view text);

}  // namespace hucprof
