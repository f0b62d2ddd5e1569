#pragma once
#include <cstdint>
#include <map>
#include <string>

namespace hucprof {

// A profile's count under `key` (a context, an exclusion reason), 0 where it has none.
inline uint64_t count_of(const std::map<std::string, uint64_t>& counts, const char* key) {
  auto it = counts.find(key);
  return it == counts.end() ? 0 : it->second;
}

}  // namespace hucprof
