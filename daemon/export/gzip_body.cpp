#include "export/gzip_body.h"

#include <algorithm>
#include <cctype>
#include <string>

namespace hucprof {
namespace {

std::string_view trim(std::string_view text) {
  while (!text.empty() && std::isspace(static_cast<unsigned char>(text.front())))
    text.remove_prefix(1);
  while (!text.empty() && std::isspace(static_cast<unsigned char>(text.back())))
    text.remove_suffix(1);
  return text;
}

std::string lower(std::string_view text) {
  std::string out(text);
  for (char& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

// "q=0", "q=0.0", "q=0.000" refuse a coding; anything else (or no q) accepts it.
bool q_is_zero(std::string_view params) {
  size_t start = 0;
  while (start < params.size()) {
    const size_t end = std::min(params.find(';', start), params.size());
    const std::string param = lower(trim(params.substr(start, end - start)));
    start = end + 1;
    if (param.rfind("q=", 0) != 0) continue;
    const std::string value = param.substr(2);
    if (value.empty() || value[0] != '0') return false;
    return value.find_first_not_of("0.", 1) == std::string::npos;
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
    const std::string coding = lower(trim(item.substr(0, semicolon)));
    const bool refused =
        semicolon != std::string_view::npos && q_is_zero(item.substr(semicolon + 1));
    if (coding == "gzip" || coding == "x-gzip") {
      (refused ? gzip_refused : gzip) = true;
    } else if (coding == "*" && !refused) {
      star = true;
    }
  }
  return !gzip_refused && (gzip || star);
}

}  // namespace hucprof
