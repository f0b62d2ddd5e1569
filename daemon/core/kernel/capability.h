#pragma once
#include <string>

namespace hucprof {

// Whether the running kernel allows something, with the reason in words for logs and
// `hucprof doctor`. Found by trying at the kernel edge; decided upon in daemon/core.
struct Capability {
  bool ok = false;
  std::string detail;
};

}  // namespace hucprof
