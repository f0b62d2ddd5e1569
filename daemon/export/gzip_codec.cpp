#include "export/gzip_codec.h"

#include "export/inflate_stream.h"

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

GzipWriter::GzipWriter(GzipLevel level, std::function<void()> pause)
    : z_(std::make_unique<z_stream>()), pause_(std::move(pause)) {
  const int zlib_level = level == GzipLevel::Fastest ? Z_BEST_SPEED : Z_DEFAULT_COMPRESSION;
  ok_ = deflateInit2(z_.get(), zlib_level, Z_DEFLATED, kGzipWindowBits, 8, Z_DEFAULT_STRATEGY) ==
        Z_OK;
  if (!ok_) z_.reset();
}

GzipWriter::~GzipWriter() {
  if (z_) deflateEnd(z_.get());
}

bool GzipWriter::write(std::string_view data) {
  while (ok_ && !data.empty()) {
    const size_t piece = std::min(data.size(), kChunk);
    ok_ = deflate_some(data.substr(0, piece), false);
    data.remove_prefix(piece);
  }
  return ok_;
}

std::optional<std::string> GzipWriter::finish() {
  if (ok_) ok_ = deflate_some({}, true);
  if (!ok_) return std::nullopt;
  out_.resize(written_);
  out_.shrink_to_fit();
  return std::move(out_);
}

// Feeds `data` (at most kChunk) to zlib, growing the output as it fills; `last` finishes the
// member.
bool GzipWriter::deflate_some(std::string_view data, bool last) {
  if (pause_) pause_();
  z_->next_in = reinterpret_cast<Bytef*>(const_cast<char*>(data.data()));
  z_->avail_in = static_cast<uInt>(data.size());
  for (;;) {
    if (written_ == out_.size()) out_.resize(out_.size() * 2 + kChunk);
    z_->next_out = reinterpret_cast<Bytef*>(out_.data() + written_);
    z_->avail_out = chunk_of(out_.size() - written_);
    const uInt room = z_->avail_out;
    const int rc = deflate(z_.get(), last ? Z_FINISH : Z_NO_FLUSH);
    written_ += room - z_->avail_out;
    if (rc == Z_STREAM_END) return true;
    if (rc != Z_OK && rc != Z_BUF_ERROR) return false;
    if (rc == Z_BUF_ERROR && z_->avail_out != 0) return !last;  // no progress possible
    // Z_OK with room left: all input taken and nothing more to write until more comes.
    if (!last && z_->avail_in == 0 && z_->avail_out != 0) return true;
  }
}

std::optional<std::string> gzip_compress(std::string_view data, GzipLevel level,
                                         const std::function<void()>& pause) {
  GzipWriter writer(level, pause);
  writer.write(data);
  return writer.finish();
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
