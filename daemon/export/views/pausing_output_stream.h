#pragma once
#include <cstdint>
#include <functional>
#include <utility>

#include "google/protobuf/io/zero_copy_stream.h"

namespace hucprof {

// Forwards to `to`, calling `pause` (if any) before each buffer it asks for: a large message
// serialized into a gzip stream steps aside for a drain (DrainGate) every buffer of it.
class PausingOutputStream final : public google::protobuf::io::ZeroCopyOutputStream {
 public:
  PausingOutputStream(google::protobuf::io::ZeroCopyOutputStream& to, std::function<void()> pause)
      : to_(to), pause_(std::move(pause)) {}

  bool Next(void** data, int* size) override {
    if (pause_) pause_();
    return to_.Next(data, size);
  }
  void BackUp(int count) override { to_.BackUp(count); }
  int64_t ByteCount() const override { return to_.ByteCount(); }

 private:
  google::protobuf::io::ZeroCopyOutputStream& to_;
  std::function<void()> pause_;
};

}  // namespace hucprof
