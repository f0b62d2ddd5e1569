#include "core/text/metrics_url.h"

#include <algorithm>
#include <cctype>

#include "core/base/quoted_value.h"

namespace hucprof {
namespace {

constexpr size_t kMaxUrlBytes = 8192;

std::string lowered(std::string_view text) {
  std::string out(text);
  std::transform(out.begin(), out.end(), out.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return out;
}

int hex_value(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

// RFC 3986 userinfo without the password: unreserved, sub-delims and %XX, decoded.
Result<std::string> user_of(std::string_view userinfo) {
  if (userinfo.find(':') != std::string_view::npos) {
    return Error{
        "a password in the URL would be visible to every user in ps: give only the user "
        "(http://USER@host:port) and the password in HUCPROF_FROM_PASSWORD"};
  }
  std::string out;
  for (size_t i = 0; i < userinfo.size(); ++i) {
    const char c = userinfo[i];
    if (c == '%') {
      const bool two_more = i + 2 < userinfo.size();
      const int high = two_more ? hex_value(userinfo[i + 1]) : -1;
      const int low = two_more ? hex_value(userinfo[i + 2]) : -1;
      if (high < 0 || low < 0) {
        return Error{"the user name has a \"%\" that is not followed by two hex digits"};
      }
      out += static_cast<char>(high * 16 + low);
      i += 2;
    } else if (std::isalnum(static_cast<unsigned char>(c)) != 0 ||
               std::string_view("-._~!$&'()*+,;=").find(c) != std::string_view::npos) {
      out += c;
    } else {
      return Error{"the user name holds " + quoted_value(std::string_view(&c, 1)) +
                   " (percent-encode it)"};
    }
  }
  if (out.empty()) return Error{"the user name before \"@\" is empty"};
  return out;
}

}  // namespace

std::string MetricsUrl::text() const {
  return std::string(tls ? "https://" : "http://") + address.text() + target;
}

Result<MetricsUrl> parse_metrics_url(std::string_view text) {
  if (text.size() > kMaxUrlBytes) {
    return Error{"longer than " + std::to_string(kMaxUrlBytes) + " bytes"};
  }
  const size_t scheme_end = text.find("://");
  if (scheme_end == std::string_view::npos) {
    return Error{quoted_value(text) + " is not a URL (expected http://HOST:PORT or https://…)"};
  }
  MetricsUrl url;
  const std::string scheme = lowered(text.substr(0, scheme_end));
  if (scheme != "http" && scheme != "https") {
    return Error{quoted_value(text.substr(0, scheme_end)) + " is not http or https"};
  }
  url.tls = scheme == "https";
  std::string_view rest = text.substr(scheme_end + 3);
  const size_t path_start = rest.find_first_of("/?#");
  std::string_view authority = rest.substr(0, path_start);
  std::string_view target =
      path_start == std::string_view::npos ? std::string_view() : rest.substr(path_start);

  if (const size_t at = authority.rfind('@'); at != std::string_view::npos) {
    auto user = user_of(authority.substr(0, at));
    if (!user.ok()) return user.error();
    url.user = std::move(user).value();
    authority.remove_prefix(at + 1);
  }
  // The port is optional in a URL and not in a listen address.
  const size_t bracket = authority.rfind(']');
  const size_t colon = authority.rfind(':');
  const bool has_port =
      colon != std::string_view::npos && (bracket == std::string_view::npos || colon > bracket);
  const std::string host_port =
      std::string(authority) + (has_port ? "" : (url.tls ? ":443" : ":80"));
  auto address = parse_listen_address(host_port);
  if (!address.ok()) return address.error();
  if (address->kind == ListenAddress::Kind::Any) return Error{"the URL names no host"};
  if (address->port == 0) return Error{"port 0 is no port to connect to"};
  url.address = address.value();

  if (!target.empty() && target.front() == '#') target = {};
  if (const size_t fragment = target.find('#'); fragment != std::string_view::npos) {
    target = target.substr(0, fragment);
  }
  for (const char c : target) {
    const auto byte = static_cast<unsigned char>(c);
    if (byte <= 0x20 || byte >= 0x7f) {
      return Error{
          "the path holds a space, a control character or a byte that is not ASCII "
          "(percent-encode it)"};
    }
  }
  url.target = std::string(target);
  if (url.target.empty() || url.target == "/") url.target = "/metrics";
  if (url.target.front() == '?') url.target = "/metrics" + url.target;
  return url;
}

}  // namespace hucprof
