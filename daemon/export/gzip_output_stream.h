#pragma once
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "export/gzip_codec.h"
#include "google/protobuf/io/zero_copy_stream.h"

namespace hucprof {

// A protobuf output stream that compresses as it goes: a message serialized into it is never held
// whole, only one 64 KiB buffer of it and its compressed bytes so far. finish() (after the last
// write, and after the CodedOutputStream writing into it is gone) gives the gzip member, the same
// bytes as gzip_compress of the message serialized to a string.
class GzipOutputStream final : public google::protobuf::io::ZeroCopyOutputStream {
 public:
  explicit GzipOutputStream(GzipLevel level, std::function<void()> pause = {});

  bool Next(void** data, int* size) override;
  void BackUp(int count) override;
  int64_t ByteCount() const override { return count_ + static_cast<int64_t>(used_); }

  std::optional<std::string> finish();

 private:
  bool flush();

  GzipWriter writer_;
  std::vector<char> buffer_;
  size_t used_ = 0;    // of buffer_, handed out by Next and not backed up
  int64_t count_ = 0;  // bytes flushed to writer_
};

}  // namespace hucprof
