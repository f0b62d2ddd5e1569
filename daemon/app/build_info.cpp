#include "app/build_info.h"

#include <bpf/libbpf.h>

// Set for the hucprof target by daemon/CMakeLists.txt; the fallback is for tools that compile
// the file on its own (clangd).
#ifndef HUCPROF_VERSION
#define HUCPROF_VERSION "dev"
#endif

namespace hucprof {

const char* hucprof_version() { return HUCPROF_VERSION; }

std::string libbpf_version() {
  return std::to_string(libbpf_major_version()) + "." + std::to_string(libbpf_minor_version());
}

}  // namespace hucprof
