#pragma once
#include <map>
#include <string>
#include <string_view>

#include "core/base/result.h"

namespace hucprof {

// The request target of an HTTP/1.1 request line (RFC 9112 3.2), decoded: what routing and the
// handlers see. Pure, so the parser is unit-tested and fuzzed on text.
struct RequestTarget {
  std::string path;                               // percent-decoded, starts with "/"
  std::multimap<std::string, std::string> query;  // percent-decoded, "+" is a space
};

// Origin form ("/metrics?x=1") and absolute form ("http://host:9478/metrics", what proxies
// send); anything else (authority form, "*") is not a resource here. Errors are in words for a
// 400 response: `bad percent-encoding in the path`.
Result<RequestTarget> parse_request_target(std::string_view target);

// "a=1&b=x%20y&c" -> {a:1, b:"x y", c:""}.
Result<std::multimap<std::string, std::string>> parse_query(std::string_view query);

// %XX decoding; plus_is_space for query components. An error on "%", "%4", "%zz".
Result<std::string> percent_decode(std::string_view text, bool plus_is_space);

}  // namespace hucprof
