#pragma once
#include <string>

namespace hucprof {

// What this binary is, as `hucprof --version`, the start-up log line, hucprof_build_info and
// profile headers name it.
const char* hucprof_version();  // the project version CMake compiled in
std::string libbpf_version();   // "major.minor" of the libbpf linked in

}  // namespace hucprof
