#include "core/symbols/build_id.h"

#include <cstdint>
#include <cstring>

namespace hucprof {

namespace {

constexpr uint32_t kNtGnuBuildId = 3;

uint32_t word(std::string_view bytes, size_t at) {
  uint32_t w = 0;
  std::memcpy(&w, bytes.data() + at, sizeof(w));  // notes are in the kernel's byte order
  return w;
}

size_t aligned4(size_t n) { return (n + 3) & ~size_t{3}; }

}  // namespace

std::optional<std::string> gnu_build_id(std::string_view notes) {
  size_t at = 0;
  while (notes.size() - at >= 12) {
    const uint32_t name_size = word(notes, at), desc_size = word(notes, at + 4),
                   type = word(notes, at + 8);
    at += 12;
    if (name_size > notes.size() - at) return std::nullopt;
    const std::string_view name = notes.substr(at, name_size);
    at += aligned4(name_size);
    if (at > notes.size() || desc_size > notes.size() - at) return std::nullopt;
    const std::string_view desc = notes.substr(at, desc_size);
    at += aligned4(desc_size);
    if (type == kNtGnuBuildId && name == std::string_view("GNU\0", 4) && !desc.empty()) {
      return hex_bytes(desc);
    }
    if (at > notes.size()) return std::nullopt;
  }
  return std::nullopt;
}

std::string hex_bytes(std::string_view bytes) {
  static constexpr char kHex[] = "0123456789abcdef";
  std::string hex;
  hex.reserve(bytes.size() * 2);
  for (unsigned char c : bytes) {
    hex += kHex[c >> 4];
    hex += kHex[c & 15];
  }
  return hex;
}

std::string build_id_path(std::string_view build_id) {
  if (build_id.size() < 3) return std::string(build_id);
  return std::string(build_id.substr(0, 2)) + "/" + std::string(build_id.substr(2));
}

std::string short_build_id(std::string_view build_id) {
  return std::string(build_id.substr(0, 12));
}

}  // namespace hucprof
