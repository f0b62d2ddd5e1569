#pragma once
#include <cstddef>
#include <functional>
#include <optional>
#include <string>
#include <string_view>

#include "core/base/result.h"

namespace hucprof {

enum class GzipLevel {
  // pprof profiles, as Go's runtime/pprof writes them: a profile is encoded per request, and
  // zlib's default level took as long as building it for a file about 10 % smaller.
  Fastest,
  Default,  // zlib's own default (6): /metrics bodies
};

// A gzip member (RFC 1952) of `data`, for pprof files and HTTP bodies alike. `pause`, if given, is
// called between 64 KiB chunks (see DrainGate). nullopt if zlib fails (out of memory).
std::optional<std::string> gzip_compress(std::string_view data, GzipLevel level,
                                         const std::function<void()>& pause = {});

// Inflates gzip data (one member or several, as InflateStream reads it); refuses corrupt or
// truncated data, junk after it, and data that would inflate beyond max_output bytes (a small
// file must not take all memory).
Result<std::string> gzip_decompress(std::string_view data, size_t max_output);

bool looks_gzipped(std::string_view data);

}  // namespace hucprof
