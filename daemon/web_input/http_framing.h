#pragma once
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <boost/beast/http/field.hpp>

namespace hucprof {

// What of a request head decides where the request ends and which host it is for: RFC 9112's
// rules on it are checked before anything is acted on, because a server and a proxy in front
// of it that disagree here let one client smuggle a request past the proxy in another's body.
struct RequestHead {
  unsigned version = 11;                            // 10 or 11
  std::vector<std::string_view> transfer_encoding;  // every Transfer-Encoding field, as sent
  std::vector<std::string_view> host;               // every Host field
  bool content_length = false;                      // a Content-Length field is present
};

// Why the request must be refused, and the connection closed after the answer: 400 when its
// framing or Host is faulty, 501 for a transfer coding other than chunked (which hucprof does
// not decode; it reads and drops bodies).
struct FramingError {
  int status = 400;
  std::string reason;  // one line, for the response body
};

std::optional<FramingError> request_framing_error(const RequestHead& head);

// The head of a Boost.Beast request, as request_framing_error reads it (views into `request`).
template <class Request>
RequestHead request_head_of(const Request& request) {
  namespace http = boost::beast::http;
  RequestHead head;
  head.version = request.version();
  for (const auto& field : request) {
    if (field.name() == http::field::transfer_encoding)
      head.transfer_encoding.push_back(field.value());
    if (field.name() == http::field::host) head.host.push_back(field.value());
    if (field.name() == http::field::content_length) head.content_length = true;
  }
  return head;
}

}  // namespace hucprof
