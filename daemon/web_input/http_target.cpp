#include "web_input/http_target.h"

#include <algorithm>

#include "core/base/quoted_value.h"
#include "web_input/http_text.h"

namespace hucprof {
namespace {

int hex_value(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

}  // namespace

Result<std::string> percent_decode(std::string_view text, bool plus_is_space) {
  std::string out;
  out.reserve(text.size());
  for (size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (c == '%') {
      const int high = i + 2 < text.size() ? hex_value(text[i + 1]) : -1;
      const int low = i + 2 < text.size() ? hex_value(text[i + 2]) : -1;
      if (high < 0 || low < 0) return Error{"bad percent-encoding"};
      out.push_back(static_cast<char>(high * 16 + low));
      i += 2;
    } else if (c == '+' && plus_is_space) {
      out.push_back(' ');
    } else {
      out.push_back(c);
    }
  }
  return out;
}

Result<std::multimap<std::string, std::string>> parse_query(std::string_view query) {
  std::multimap<std::string, std::string> params;
  size_t start = 0;
  while (start <= query.size()) {
    const size_t end = std::min(query.find('&', start), query.size());
    const std::string_view pair = query.substr(start, end - start);
    start = end + 1;
    if (pair.empty()) continue;
    const size_t equals = pair.find('=');
    auto name = percent_decode(pair.substr(0, equals), true);
    auto value = percent_decode(
        equals == std::string_view::npos ? std::string_view() : pair.substr(equals + 1), true);
    if (!name.ok() || !value.ok()) {
      return Error{"bad percent-encoding in query parameter " +
                   quoted_value(pair.substr(0, std::min<size_t>(equals, 64)))};
    }
    params.emplace(std::move(name).value(), std::move(value).value());
  }
  return params;
}

Result<RequestTarget> parse_request_target(std::string_view target) {
  // Absolute form: drop "scheme://authority"; the host is not ours to check (Host decides
  // nothing here: one site per port). "http://node?x=1" has the empty path, which is "/".
  std::string origin_form;
  if (starts_with_ignoring_case(target, "http://") ||
      starts_with_ignoring_case(target, "https://")) {
    const size_t authority = target.find("://") + 3;
    const size_t path_start = target.find_first_of("/?#", authority);
    if (authority == target.size() || path_start == authority) {
      return Error{"absolute URL without a host"};
    }
    const std::string_view rest =
        path_start == std::string_view::npos ? std::string_view() : target.substr(path_start);
    origin_form = (rest.empty() || rest.front() != '/' ? "/" : "") + std::string(rest);
    target = origin_form;
  }
  if (target.empty() || target.front() != '/') return Error{"request target is not a path"};
  // A fragment is never sent by a conforming client; drop it like Go does.
  target = target.substr(0, target.find('#'));
  const size_t question = target.find('?');
  auto path = percent_decode(target.substr(0, question), false);
  if (!path.ok()) return Error{"bad percent-encoding in the path"};
  RequestTarget decoded;
  decoded.path = std::move(path).value();
  if (decoded.path.find('\0') != std::string::npos) return Error{"NUL byte in the path"};
  if (question != std::string_view::npos) {
    auto query = parse_query(target.substr(question + 1));
    if (!query.ok()) return query.error();
    decoded.query = std::move(query).value();
  }
  return decoded;
}

}  // namespace hucprof
