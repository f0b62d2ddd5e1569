#include "export/gzip_output_stream.h"

#include <string_view>
#include <utility>

namespace hucprof {

namespace {
constexpr size_t kBuffer = 64 * 1024;  // gzip_compress's chunk: the same pieces reach zlib
}  // namespace

GzipOutputStream::GzipOutputStream(GzipLevel level, std::function<void()> pause)
    : writer_(level, std::move(pause)), buffer_(kBuffer) {}

bool GzipOutputStream::Next(void** data, int* size) {
  if (used_ == buffer_.size() && !flush()) return false;
  *data = buffer_.data() + used_;
  *size = static_cast<int>(buffer_.size() - used_);
  used_ = buffer_.size();
  return true;
}

void GzipOutputStream::BackUp(int count) { used_ -= static_cast<size_t>(count); }

bool GzipOutputStream::flush() {
  const bool ok = writer_.write(std::string_view(buffer_.data(), used_));
  count_ += static_cast<int64_t>(used_);
  used_ = 0;
  return ok;
}

std::optional<std::string> GzipOutputStream::finish() {
  if (!flush()) return std::nullopt;
  return writer_.finish();
}

}  // namespace hucprof
