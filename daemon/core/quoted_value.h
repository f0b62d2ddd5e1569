#pragma once
#include <string>
#include <string_view>

namespace hucprof {

// A value from outside (a flag, a file), in double quotes, for an error message: control bytes
// come back as \xNN so the message stays on one line and cannot carry terminal sequences.
std::string quoted_value(std::string_view text);

}  // namespace hucprof
