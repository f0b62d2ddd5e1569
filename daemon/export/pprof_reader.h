#pragma once
#include <string>
#include <string_view>
#include <variant>

#include "core/stack_profile.h"

namespace hucprof {

// A pprof file (gzipped or not) back into a StackProfile, for `hucprof report`. Every index and
// id is checked before it is followed: a corrupt, truncated or foreign file gives one line saying
// what is wrong, never a crash. Profiles from other tools are read as far as they carry
// hucprof's sample types (samples, cpu, calls, bytes, latency, subchecks).
std::variant<StackProfile, std::string> read_pprof(std::string_view file_bytes);

}  // namespace hucprof
