#include "web_input/http_framing.h"

#include <algorithm>
#include <cctype>

#include "core/base/quoted_value.h"

namespace hucprof {

namespace {

std::string_view trimmed(std::string_view text) {
  while (!text.empty() && (text.front() == ' ' || text.front() == '\t')) text.remove_prefix(1);
  while (!text.empty() && (text.back() == ' ' || text.back() == '\t')) text.remove_suffix(1);
  return text;
}

std::string lowercase(std::string_view text) {
  std::string out(text);
  for (char& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

// The codings of every Transfer-Encoding field in order (a list may be split over fields and
// hold empty elements, RFC 9110 5.6.1).
std::vector<std::string> codings_of(const std::vector<std::string_view>& fields) {
  std::vector<std::string> codings;
  for (std::string_view field : fields) {
    while (true) {
      const size_t comma = field.find(',');
      const std::string_view element = trimmed(field.substr(0, comma));
      if (!element.empty()) codings.push_back(lowercase(element));
      if (comma == std::string_view::npos) break;
      field.remove_prefix(comma + 1);
    }
  }
  return codings;
}

// uri-host [":" port] (RFC 9110 7.2), loosely: what can never be one is refused.
bool plausible_host(std::string_view host) {
  return std::none_of(host.begin(), host.end(), [](char c) {
    const auto byte = static_cast<unsigned char>(c);
    return byte <= ' ' || byte == 0x7f || c == '/' || c == '?' || c == '#' || c == '@' ||
           c == '\\' || c == '"' || c == '<' || c == '>';
  });
}

FramingError bad(std::string reason) { return {400, std::move(reason)}; }

}  // namespace

std::optional<FramingError> request_framing_error(const RequestHead& head) {
  if (head.host.size() > 1) return bad("more than one Host header (RFC 9112 3.2)");
  if (head.host.empty() && head.version >= 11) {
    return bad("no Host header, which HTTP/1.1 requires (RFC 9112 3.2)");
  }
  if (!head.host.empty() && !plausible_host(head.host.front())) {
    return bad("Host " + quoted_value(head.host.front()) + " is not a host (RFC 9112 3.2)");
  }
  if (head.transfer_encoding.empty()) return std::nullopt;
  if (head.version < 11) {
    return bad("Transfer-Encoding in an HTTP/1.0 request (RFC 9112 6.1)");
  }
  if (head.content_length) {
    return bad("both Transfer-Encoding and Content-Length (RFC 9112 6.3)");
  }
  const std::vector<std::string> codings = codings_of(head.transfer_encoding);
  if (codings.empty() || codings.back() != "chunked") {
    const std::string last = codings.empty() ? "" : codings.back();
    return bad("Transfer-Encoding " + quoted_value(last) +
               " is not chunked, so the body has no known end (RFC 9112 6.3)");
  }
  if (std::count(codings.begin(), codings.end(), "chunked") > 1) {
    return bad("Transfer-Encoding applies chunked more than once (RFC 9112 6.1)");
  }
  if (codings.size() > 1) {
    return FramingError{501, "transfer coding " + quoted_value(codings.front()) +
                                 " is not implemented (only chunked is)"};
  }
  return std::nullopt;
}

}  // namespace hucprof
