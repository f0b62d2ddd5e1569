#include "web_input/accept_encoding.h"

#include <algorithm>

#include "web_input/http_text.h"

namespace hucprof {
namespace {

// "q=0", "q=0.0", "q=0.000" refuse a coding; anything else (or no q) accepts it.
bool q_is_zero(std::string_view params) {
  size_t start = 0;
  while (start < params.size()) {
    const size_t end = std::min(params.find(';', start), params.size());
    const std::string_view param = trim_ows(params.substr(start, end - start));
    start = end + 1;
    if (!starts_with_ignoring_case(param, "q=")) continue;
    const std::string_view value = param.substr(2);
    if (value.empty() || value[0] != '0') return false;
    return value.find_first_not_of("0.", 1) == std::string_view::npos;
  }
  return false;
}

}  // namespace

bool accepts_gzip(std::string_view accept_encoding) {
  bool star = false, gzip = false, gzip_refused = false;
  size_t start = 0;
  while (start <= accept_encoding.size()) {
    const size_t end = std::min(accept_encoding.find(',', start), accept_encoding.size());
    const std::string_view item = accept_encoding.substr(start, end - start);
    start = end + 1;
    const size_t semicolon = item.find(';');
    const std::string_view coding = trim_ows(item.substr(0, semicolon));
    const bool refused =
        semicolon != std::string_view::npos && q_is_zero(item.substr(semicolon + 1));
    if (equals_ignoring_case(coding, "gzip") || equals_ignoring_case(coding, "x-gzip")) {
      (refused ? gzip_refused : gzip) = true;
    } else if (coding == "*" && !refused) {
      star = true;
    }
  }
  return !gzip_refused && (gzip || star);
}

}  // namespace hucprof
