#include "export/gzip_codec.h"

#include <zlib.h>

#include <algorithm>
#include <utility>

namespace hucprof {

namespace {

constexpr int kGzipWindowBits = 15 + 16;  // zlib: 15-bit window, gzip wrapper
constexpr size_t kChunk = 64 * 1024;

// zlib counts in uInt; feed it at most this much at a time.
uInt chunk_of(size_t n) { return static_cast<uInt>(std::min<size_t>(n, 1u << 30)); }

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
    z.avail_out = chunk_of(out.size() - written);
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

Inflated gzip_decompress(std::string_view data, size_t max_output) {
  auto failed = [](std::string why) { return Inflated{"", std::move(why)}; };
  if (!looks_gzipped(data)) return failed("not gzip data (no gzip magic bytes)");
  z_stream z{};
  if (inflateInit2(&z, kGzipWindowBits) != Z_OK) return failed("zlib: inflateInit2 failed");
  std::string out;
  z.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(data.data()));
  size_t in_left = data.size();
  int rc = Z_OK;
  while (rc != Z_STREAM_END) {
    if (out.size() >= max_output) {
      inflateEnd(&z);
      return failed("inflates to more than " + std::to_string(max_output >> 20) + " MiB");
    }
    const size_t before = out.size();
    out.resize(std::min(max_output, before + kChunk));
    z.next_out = reinterpret_cast<Bytef*>(out.data() + before);
    z.avail_out = chunk_of(out.size() - before);
    const uInt room = z.avail_out;
    z.avail_in = chunk_of(in_left);
    const uInt fed = z.avail_in;
    rc = inflate(&z, Z_NO_FLUSH);
    in_left -= fed - z.avail_in;
    out.resize(before + (room - z.avail_out));
    if (rc == Z_STREAM_END) break;
    if (rc == Z_BUF_ERROR && in_left == 0 && z.avail_in == 0) {
      inflateEnd(&z);
      return failed("truncated gzip data (the stream ends early)");
    }
    if (rc != Z_OK && rc != Z_BUF_ERROR) {
      std::string why = z.msg ? z.msg : "zlib error " + std::to_string(rc);
      inflateEnd(&z);
      return failed("corrupt gzip data (" + why + ")");
    }
  }
  inflateEnd(&z);
  return Inflated{std::move(out), ""};
}

}  // namespace hucprof
