// libFuzzer target: what a client sends, through every parser the web server runs on it. The
// input is parsed as a whole HTTP/1.1 request with Boost.Beast's parser and the server's limits;
// its target goes through parse_request_target (path, ?seconds=N style query parameters), its
// Authorization through parse_basic_authorization, its Accept-Encoding through accepts_gzip.
// The raw input also goes through each of them directly, so seeds can be bare targets.
// Invariants: a decoded path starts with "/" and has no NUL; decoding what was re-encoded
// gives the same path and query.
//
//   clang++ -std=c++20 -g -O1 -fsanitize=fuzzer,address,undefined -Idaemon \
//     fuzz/http_request_fuzz.cpp daemon/export/http_target.cpp daemon/export/basic_auth.cpp \
//     daemon/export/accept_encoding.cpp -lcrypt -lcrypto -lz -o http_request_fuzz
//   ./http_request_fuzz -max_total_time=60 fuzz/corpus/http_request
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>

#include <boost/beast/core/error.hpp>
#include <boost/beast/http/parser.hpp>
#include <boost/beast/http/string_body.hpp>

#include "export/accept_encoding.h"
#include "export/basic_auth.h"
#include "export/http_target.h"

namespace {

namespace http = boost::beast::http;

void check(bool condition) {
  if (!condition) std::abort();
}

// Beast's string_view is boost's or std's depending on BOOST_BEAST_USE_STD_STRING_VIEW.
template <typename View>
std::string_view view(const View& text) {
  return std::string_view(text.data(), text.size());
}

std::string percent_encode(std::string_view text) {
  static constexpr char kHex[] = "0123456789ABCDEF";
  std::string out;
  for (const char c : text) {
    const auto byte = static_cast<unsigned char>(c);
    out += '%';
    out += kHex[byte >> 4];
    out += kHex[byte & 0xf];
  }
  return out;
}

void target(std::string_view text) {
  auto parsed = hucprof::parse_request_target(text);
  if (!std::holds_alternative<hucprof::RequestTarget>(parsed)) return;
  const auto& decoded = std::get<hucprof::RequestTarget>(parsed);
  check(!decoded.path.empty() && decoded.path.front() == '/');
  check(decoded.path.find('\0') == std::string::npos);
  // Round trip: every byte encoded, then parsed again.
  std::string again = percent_encode(decoded.path);
  again[0] = '/';
  again.erase(1, 2);
  std::string query;
  for (const auto& [name, value] : decoded.query) {
    query += (query.empty() ? "" : "&") + percent_encode(name) + "=" + percent_encode(value);
  }
  if (!query.empty()) again += "?" + query;
  auto reparsed = hucprof::parse_request_target(again);
  check(std::holds_alternative<hucprof::RequestTarget>(reparsed));
  check(std::get<hucprof::RequestTarget>(reparsed).path == decoded.path);
  check(std::get<hucprof::RequestTarget>(reparsed).query == decoded.query);
}

void authorization(std::string_view text) {
  if (auto credentials = hucprof::parse_basic_authorization(text)) {
    check(credentials->user.find(':') == std::string::npos);
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view input(reinterpret_cast<const char*>(data), size);
  target(input);
  authorization(input);
  hucprof::accepts_gzip(input);

  // The limits of HttpServerLimits: 16 KiB of head, 64 KiB of body.
  http::request_parser<http::string_body> parser;
  parser.header_limit(16 * 1024);
  parser.body_limit(64 * 1024);
  parser.eager(true);
  boost::beast::error_code ec;
  parser.put(boost::asio::buffer(input.data(), input.size()), ec);
  if (ec || !parser.is_header_done()) return 0;
  const auto& request = parser.get();
  target(view(request.target()));
  authorization(view(request[http::field::authorization]));
  hucprof::accepts_gzip(view(request[http::field::accept_encoding]));
  return 0;
}
