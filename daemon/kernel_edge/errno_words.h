#pragma once
#include <cstring>
#include <string>

namespace hucprof {

// "EPERM: Operation not permitted": the errno's name, which a person searches for, and its words.
inline std::string errno_words(int err) {
  return std::string(strerrorname_np(err) ? strerrorname_np(err) : "E?") + ": " + strerror(err);
}

}  // namespace hucprof
