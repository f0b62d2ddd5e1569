#include "core/files/compressed_size.h"

#include <cstddef>

namespace hucprof {

namespace {

constexpr uint32_t kZstdMagic = 0xFD2FB528;
constexpr uint32_t kSkippableMagic = 0x184D2A50;  // the low 4 bits are free
constexpr uint64_t kMaxBlockBytes = uint64_t{128} << 10;

// Little-endian reads that fail rather than run past the end.
class Reader {
 public:
  explicit Reader(std::string_view bytes) : bytes_(bytes) {}
  bool empty() const { return pos_ == bytes_.size(); }
  std::optional<uint64_t> le(size_t width) {
    if (bytes_.size() - pos_ < width) return std::nullopt;
    uint64_t value = 0;
    for (size_t i = 0; i < width; ++i) {
      value |= uint64_t{static_cast<unsigned char>(bytes_[pos_ + i])} << (8 * i);
    }
    pos_ += width;
    return value;
  }
  bool skip(uint64_t n) {
    if (bytes_.size() - pos_ < n) return false;
    pos_ += static_cast<size_t>(n);
    return true;
  }

 private:
  std::string_view bytes_;
  size_t pos_ = 0;
};

// One frame after its magic: the most its blocks inflate to.
std::optional<uint64_t> frame_bound(Reader& in) {
  const auto descriptor = in.le(1);
  if (!descriptor) return std::nullopt;
  const unsigned content_size_flag = static_cast<unsigned>(*descriptor >> 6);
  const bool single_segment = (*descriptor >> 5) & 1;
  const bool checksum = (*descriptor >> 2) & 1;
  const unsigned dictionary_flag = static_cast<unsigned>(*descriptor & 3);
  if ((*descriptor >> 3) & 1) return std::nullopt;  // reserved bit
  static constexpr size_t kDictionaryBytes[] = {0, 1, 2, 4};
  static constexpr size_t kContentSizeBytes[] = {0, 2, 4, 8};
  const size_t content_size_bytes =
      content_size_flag == 0 && single_segment ? 1 : kContentSizeBytes[content_size_flag];
  if (!in.skip((single_segment ? 0 : 1) + kDictionaryBytes[dictionary_flag] + content_size_bytes)) {
    return std::nullopt;
  }
  uint64_t bound = 0;
  for (bool last = false; !last;) {
    const auto header = in.le(3);
    if (!header) return std::nullopt;
    last = *header & 1;
    const unsigned type = static_cast<unsigned>((*header >> 1) & 3);
    const uint64_t size = *header >> 3;
    switch (type) {
      case 0:  // raw: size bytes, as they are
        if (!in.skip(size)) return std::nullopt;
        bound += size;
        break;
      case 1:  // RLE: one byte, size times
        if (!in.skip(1)) return std::nullopt;
        bound += size;
        break;
      case 2:  // compressed: size bytes of input, at most a block of output
        if (!in.skip(size)) return std::nullopt;
        bound += kMaxBlockBytes;
        break;
      default:
        return std::nullopt;
    }
  }
  if (checksum && !in.skip(4)) return std::nullopt;
  return bound;
}

}  // namespace

std::string_view compression_of(std::string_view head) {
  if (head.starts_with("\x1f\x8b")) return "gzip";
  if (head.starts_with(std::string_view("\xfd"
                                        "7zXZ\0",
                                        6)))
    return "xz";
  if (head.starts_with("BZh")) return "bzip2";
  if (head.starts_with("\x28\xb5\x2f\xfd")) return "zstd";
  return "";
}

std::optional<uint64_t> zstd_inflated_bound(std::string_view bytes) {
  Reader in(bytes);
  uint64_t bound = 0;
  bool frames = false;
  while (!in.empty()) {
    const auto magic = in.le(4);
    if (!magic) return std::nullopt;
    if ((*magic & 0xFFFFFFF0) == kSkippableMagic) {
      const auto size = in.le(4);
      if (!size || !in.skip(*size)) return std::nullopt;
      continue;
    }
    if (*magic != kZstdMagic) return std::nullopt;
    const auto frame = frame_bound(in);
    if (!frame) return std::nullopt;
    bound += *frame;
    frames = true;
  }
  if (!frames) return std::nullopt;
  return bound;
}

}  // namespace hucprof
