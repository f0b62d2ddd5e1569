#pragma once
// What /sys/kernel/notes and /sys/module/M/notes/.note.gnu.build-id hold, for tests that stand
// in for a running kernel: one ELF note of type NT_GNU_BUILD_ID (3), owner "GNU".
#include <cstdint>
#include <string>

namespace hucprof {

inline std::string notes_with(const std::string& build_id_hex) {
  std::string desc;
  for (size_t i = 0; i + 1 < build_id_hex.size(); i += 2) {
    desc += static_cast<char>(std::stoi(build_id_hex.substr(i, 2), nullptr, 16));
  }
  auto word = [](uint32_t w) { return std::string(reinterpret_cast<const char*>(&w), 4); };
  return word(4) + word(static_cast<uint32_t>(desc.size())) + word(3) + std::string("GNU\0", 4) +
         desc;
}

}  // namespace hucprof
