#include "export/pprof/gzip_codec.h"

#include "export/pprof/inflate_stream.h"

#include <zlib.h>

#include <algorithm>
#include <utility>

namespace hucprof {

namespace {

constexpr int kGzipWindowBits = 15 + 16;  // zlib: 15-bit window, gzip wrapper
constexpr size_t kChunk = 64 * 1024;

}  // namespace

bool looks_gzipped(std::string_view data) {
  return data.size() >= 2 && static_cast<unsigned char>(data[0]) == 0x1f &&
         static_cast<unsigned char>(data[1]) == 0x8b;
}

std::optional<std::string> gzip_compress(std::string_view data, GzipLevel level,
                                         const std::function<void()>& pause) {
  z_stream z{};
  const int zlib_level = level == GzipLevel::Fastest ? Z_BEST_SPEED : Z_DEFAULT_COMPRESSION;
  if (deflateInit2(&z, zlib_level, Z_DEFLATED, kGzipWindowBits, 8, Z_DEFAULT_STRATEGY) != Z_OK) {
    return std::nullopt;
  }
  std::string out;
  out.resize(deflateBound(&z, static_cast<uLong>(data.size())) + 32);
  z.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(data.data()));
  size_t in_left = data.size();
  size_t written = 0;
  int rc = Z_OK;
  while (rc != Z_STREAM_END) {
    if (pause) pause();
    z.avail_in = static_cast<uInt>(std::min(in_left, kChunk));
    const uInt fed = z.avail_in;
    if (written == out.size()) out.resize(out.size() * 2 + kChunk);
    z.next_out = reinterpret_cast<Bytef*>(out.data() + written);
    z.avail_out = zlib_chunk_of(out.size() - written);
    const uInt room = z.avail_out;
    rc = deflate(&z, in_left == fed ? Z_FINISH : Z_NO_FLUSH);
    in_left -= fed - z.avail_in;
    written += room - z.avail_out;
    if (rc != Z_OK && rc != Z_STREAM_END && rc != Z_BUF_ERROR) {
      deflateEnd(&z);
      return std::nullopt;
    }
  }
  deflateEnd(&z);
  out.resize(written);
  return out;
}

Result<std::string> gzip_decompress(std::string_view data, size_t max_output) {
  InflateStream stream(data, max_output);
  std::string out;
  const void* piece = nullptr;
  int size = 0;
  while (stream.Next(&piece, &size)) out.append(static_cast<const char*>(piece), size);
  if (!stream.error().empty()) return Error{stream.error()};
  return out;
}

}  // namespace hucprof
