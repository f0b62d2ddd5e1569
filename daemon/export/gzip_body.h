#pragma once
#include <optional>
#include <string>
#include <string_view>

namespace hucprof {

// Whether an Accept-Encoding header value admits gzip (RFC 9110 12.5.3: "gzip" or "*" with a
// q-value above 0). Pure, fuzzed.
bool accepts_gzip(std::string_view accept_encoding);

// The gzip member (RFC 1952) of `data` at zlib's default level; nullopt if zlib fails.
std::optional<std::string> gzip_compress(std::string_view data);

}  // namespace hucprof
