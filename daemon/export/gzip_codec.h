#pragma once
#include <cstddef>
#include <functional>
#include <string>
#include <string_view>

namespace hucprof {

// gzip (RFC 1952) as pprof files use it: the whole payload compressed, not an HTTP
// Content-Encoding.
// `pause`, if given, is called between 64 KiB chunks (see DrainGate).
std::string gzip_compress(std::string_view data, const std::function<void()>& pause = {});

struct Inflated {
  std::string bytes;
  std::string error;  // why the data could not be inflated, in words; "" when it could
};
// Inflates a gzip stream; refuses a corrupt or truncated one, and one that would inflate beyond
// max_output bytes (a small file must not take all memory).
Inflated gzip_decompress(std::string_view data, size_t max_output);

bool looks_gzipped(std::string_view data);

}  // namespace hucprof
