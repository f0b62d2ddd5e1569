#pragma once
#include <string_view>

namespace hucprof {

// Whether an Accept-Encoding header value admits gzip (RFC 9110 12.5.3: "gzip" or "*" with a
// q-value above 0). Pure, fuzzed. The compression itself is gzip_codec.h's.
bool accepts_gzip(std::string_view accept_encoding);

}  // namespace hucprof
