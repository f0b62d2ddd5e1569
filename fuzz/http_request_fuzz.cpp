// libFuzzer target: what a client sends, through every parser the web server runs on it. The
// input is read as a whole HTTP/1.1 request through RequestReader with the server's bounds, as
// every connection reads (fuzz/http_body_fuzz.cpp takes the chunked body apart); its target goes
// through parse_request_target (path and query) and the profile endpoint's ?seconds=N
// (profile_seconds) and ?window=prediction&end=N (profile_window), its Authorization through
// parse_basic_authorization, its Accept-Encoding through accepts_gzip, its framing headers
// (Transfer-Encoding, Host, Content-Length) through request_framing_error. The raw input also goes
// through each of them directly, so seeds can be bare targets.
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "export/views/pprof_handler.h"
#include "fuzz_check.h"
#include "web_input/accept_encoding.h"
#include "web_input/basic_auth.h"
#include "web_input/http_framing.h"
#include "web_input/http_target.h"
#include "web_input/request_reader.h"

namespace {

namespace http = boost::beast::http;

constexpr int kMaxSeconds = 600;  // PprofHandlerLimits' default

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

void profile_seconds(const hucprof::RequestTarget& decoded) {
  auto seconds = hucprof::profile_seconds(decoded.query, kMaxSeconds);
  if (!seconds.ok()) {
    const std::string& why = seconds.error().text;
    HUC_FUZZ_CHECK(!why.empty() && hucprof::one_line(why),
                   "a refused ?seconds= is named in one line");
    return;
  }
  if (const auto& n = seconds.value()) {
    HUC_FUZZ_CHECK(*n >= 1 && *n <= kMaxSeconds, "?seconds= is within 1..max_seconds");
  }
}

void profile_window(const hucprof::RequestTarget& decoded) {
  auto window = hucprof::profile_window(decoded.query);
  if (!window.ok()) {
    const std::string& why = window.error().text;
    HUC_FUZZ_CHECK(!why.empty() && hucprof::one_line(why),
                   "a refused ?window= is named in one line");
    return;
  }
  HUC_FUZZ_CHECK(window.value().has_value() == decoded.query.contains("window"),
                 "?window= is taken exactly when given");
  if (const auto& asked = window.value(); asked && asked->end_unix_ns) {
    HUC_FUZZ_CHECK(*asked->end_unix_ns > 0 && decoded.query.count("end") == 1,
                   "?end= is taken once, and only a positive one");
  }
}

void target(std::string_view text) {
  auto parsed = hucprof::parse_request_target(text);
  if (!parsed.ok()) {
    const std::string& why = parsed.error().text;
    HUC_FUZZ_CHECK(!why.empty() && hucprof::one_line(why), "a 400 reason is one line");
    return;
  }
  const auto& decoded = parsed.value();
  HUC_FUZZ_CHECK(!decoded.path.empty() && decoded.path.front() == '/', "a path starts with /");
  HUC_FUZZ_CHECK(decoded.path.find('\0') == std::string::npos, "a path has no NUL");
  profile_seconds(decoded);
  profile_window(decoded);
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
  HUC_FUZZ_CHECK(reparsed.ok(), "a re-encoded target parses again");
  const auto* back = &reparsed.value();
  HUC_FUZZ_CHECK(back->path == decoded.path, "the re-encoded path decodes the same");
  HUC_FUZZ_CHECK(back->query == decoded.query, "the re-encoded query decodes the same");
}

// RFC 9112 6.3 and 3.2: a request the server goes on to route has a body whose end is known
// (none, Content-Length, or chunked last, as Beast then reads it) and exactly one Host in 1.1.
void framing(const hucprof::RequestReader::Request& request, bool chunked) {
  const hucprof::RequestHead head = hucprof::request_head_of(request);
  const auto error = hucprof::request_framing_error(head);
  if (error) {
    HUC_FUZZ_CHECK(error->status == 400 || error->status == 501, "framing errors are 400 or 501");
    HUC_FUZZ_CHECK(!error->reason.empty() && hucprof::one_line(error->reason),
                   "a framing error is named in one line");
    return;
  }
  HUC_FUZZ_CHECK(head.host.size() == 1 || (head.version == 10 && head.host.empty()),
                 "an accepted request names one host (none only in HTTP/1.0)");
  if (!head.transfer_encoding.empty()) {
    HUC_FUZZ_CHECK(chunked, "an accepted Transfer-Encoding is read as chunked");
    HUC_FUZZ_CHECK(!head.content_length, "never Transfer-Encoding and Content-Length at once");
    HUC_FUZZ_CHECK(head.version == 11, "Transfer-Encoding only in HTTP/1.1");
  }
}

void authorization(std::string_view text) {
  if (auto credentials = hucprof::parse_basic_authorization(text)) {
    HUC_FUZZ_CHECK(credentials->user.find(':') == std::string::npos, "a user has no colon");
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view input(reinterpret_cast<const char*>(data), size);
  target(input);
  authorization(input);
  hucprof::accepts_gzip(input);

  // The bounds of HttpServerLimits: 16 KiB of head, 64 KiB of body.
  hucprof::RequestReader reader(hucprof::RequestBounds{});
  const auto step = reader.read(input);
  HUC_FUZZ_CHECK(!reader.parser_threw(), "no input reaches a throw in the parser");
  if (step.progress != hucprof::RequestReader::Progress::Done) return 0;
  const auto request = reader.release();
  framing(request, reader.chunked());
  target(request.target());
  authorization(request[http::field::authorization]);
  hucprof::accepts_gzip(request[http::field::accept_encoding]);
  return 0;
}
