#include "export/pprof/inflate_stream.h"

#include <algorithm>

#include "export/pprof/gzip_codec.h"

namespace hucprof {

namespace {

constexpr int kGzipOnly = 15 + 16;  // zlib: 15-bit window, gzip wrapper only
constexpr size_t kBufferBytes = 64 * 1024;

}  // namespace

std::string byte_size_words(size_t bytes) {
  if (bytes >= (size_t{1} << 20) && bytes % (size_t{1} << 20) == 0) {
    return std::to_string(bytes >> 20) + " MiB";
  }
  return std::to_string(bytes) + " bytes";
}

InflateStream::InflateStream(std::string_view gzip_data, size_t max_output)
    : input_(gzip_data), max_output_(max_output), buffer_(kBufferBytes) {
  if (!looks_gzipped(input_)) {
    fail("not gzip data (no gzip magic bytes)");
    return;
  }
  if (inflateInit2(&z_, kGzipOnly) != Z_OK) {
    fail("zlib: inflateInit2 failed");
    return;
  }
  initialized_ = true;
  z_.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(input_.data()));
  z_.avail_in = 0;
}

InflateStream::~InflateStream() {
  if (initialized_) inflateEnd(&z_);
}

bool InflateStream::fail(std::string why) {
  if (error_.empty()) error_ = std::move(why);
  finished_ = true;
  return false;
}

// Inflates the next piece into buffer_; false at the end of the data or on an error.
bool InflateStream::refill() {
  filled_ = handed_out_ = 0;
  while (filled_ == 0) {
    if (finished_) return false;
    if (z_.avail_in == 0) z_.avail_in = zlib_chunk_of(input_.size());
    z_.next_out = buffer_.data();
    z_.avail_out = static_cast<uInt>(buffer_.size());
    const uInt fed = z_.avail_in;
    const int rc = inflate(&z_, Z_NO_FLUSH);
    input_.remove_prefix(fed - z_.avail_in);
    filled_ = buffer_.size() - z_.avail_out;
    inflated_ += filled_;
    if (inflated_ > max_output_) {
      filled_ = 0;
      return fail("inflates to more than " + byte_size_words(max_output_));
    }
    if (rc == Z_STREAM_END) {
      // Another member may follow (what `cat a.gz b.gz` makes); anything else is junk.
      if (input_.empty()) {
        finished_ = true;
      } else if (looks_gzipped(input_)) {
        inflateReset(&z_);
        z_.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(input_.data()));
        z_.avail_in = 0;
      } else {
        filled_ = 0;
        return fail(std::to_string(input_.size()) +
                    " bytes after the end of the gzip data that are not gzip data");
      }
    } else if (rc == Z_BUF_ERROR && input_.empty()) {
      if (filled_ == 0) return fail("truncated gzip data (the stream ends early)");
    } else if (rc != Z_OK && rc != Z_BUF_ERROR) {
      filled_ = 0;
      return fail("corrupt gzip data (" +
                  std::string(z_.msg ? z_.msg : "zlib error " + std::to_string(rc)) + ")");
    }
  }
  return true;
}

bool InflateStream::Next(const void** data, int* size) {
  if (handed_out_ == filled_ && !refill()) return false;
  *data = buffer_.data() + handed_out_;
  *size = static_cast<int>(filled_ - handed_out_);
  position_ += *size;
  handed_out_ = filled_;
  return true;
}

void InflateStream::BackUp(int count) {
  handed_out_ -= static_cast<size_t>(count);
  position_ -= count;
}

bool InflateStream::Skip(int count) {
  const void* data = nullptr;
  int size = 0;
  while (count > 0) {
    if (!Next(&data, &size)) return false;
    if (size > count) {
      BackUp(size - count);
      return true;
    }
    count -= size;
  }
  return true;
}

}  // namespace hucprof
