#pragma once
#include <zlib.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include <google/protobuf/io/zero_copy_stream.h>

namespace hucprof {

// zlib counts a buffer's bytes in a uInt: it is handed at most 1 GiB of one at a time.
inline uInt zlib_chunk_of(size_t n) { return static_cast<uInt>(std::min<size_t>(n, 1u << 30)); }

// The inflated bytes of gzip data, read piece by piece (protobuf's ZeroCopyInputStream, so a
// parser reads a large profile without holding it inflated). As gzip -d and Go's gzip.Reader
// read it: any number of members one after another; anything after the last one that is not
// another member is an error, as is a member cut short. More than max_output bytes in all is
// an error too (a small file must not expand without bound).
class InflateStream : public google::protobuf::io::ZeroCopyInputStream {
 public:
  InflateStream(std::string_view gzip_data, size_t max_output);
  ~InflateStream() override;
  InflateStream(const InflateStream&) = delete;
  InflateStream& operator=(const InflateStream&) = delete;

  bool Next(const void** data, int* size) override;
  void BackUp(int count) override;
  bool Skip(int count) override;
  int64_t ByteCount() const override { return position_; }

  // Why the stream ended early, in words ("truncated gzip data (the stream ends early)"); ""
  // when it ended where the data did.
  const std::string& error() const { return error_; }

 private:
  bool refill();
  bool fail(std::string why);

  z_stream z_{};
  bool initialized_ = false;
  std::string_view input_;
  size_t max_output_;
  std::vector<unsigned char> buffer_;
  size_t filled_ = 0;      // bytes of buffer_ holding inflated data
  size_t handed_out_ = 0;  // of which Next() has returned (minus BackUp)
  uint64_t inflated_ = 0;
  int64_t position_ = 0;
  bool finished_ = false;
  std::string error_;
};

// "256 MiB" for whole mebibytes, else "N bytes": bounds as messages state them.
std::string byte_size_words(size_t bytes);

}  // namespace hucprof
