#pragma once
#include <cstddef>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include "core/result.h"

struct z_stream_s;

namespace hucprof {

enum class GzipLevel {
  // pprof profiles, as Go's runtime/pprof writes them: a profile is encoded per request, and
  // zlib's default level took as long as building it for a file about 10 % smaller.
  Fastest,
  Default,  // zlib's own default (6): /metrics bodies
};

// One gzip member (RFC 1952) written piece by piece, so that a body being compressed is never
// held whole beside its compressed form (a pprof profile is serialized straight into it). The
// bytes are those gzip_compress gives for the pieces joined. `pause`, if given, is called before
// each 64 KiB of input (see DrainGate).
class GzipWriter {
 public:
  explicit GzipWriter(GzipLevel level, std::function<void()> pause = {});
  ~GzipWriter();
  GzipWriter(const GzipWriter&) = delete;
  GzipWriter& operator=(const GzipWriter&) = delete;

  // false once zlib has failed (out of memory); what follows is then ignored.
  bool write(std::string_view data);
  // The member, its buffer no larger than it; nullopt if zlib failed.
  std::optional<std::string> finish();

 private:
  bool deflate_some(std::string_view data, bool last);

  std::unique_ptr<z_stream_s> z_;
  bool ok_ = false;
  std::function<void()> pause_;
  std::string out_;
  size_t written_ = 0;
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
