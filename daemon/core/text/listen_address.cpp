#include "core/text/listen_address.h"

#include <arpa/inet.h>

#include <algorithm>
#include <cctype>
#include <charconv>
#include <optional>
#include <vector>

#include "core/base/quoted_value.h"
#include "core/base/text_chars.h"

namespace hucprof {
namespace {

constexpr const char* kExpectedForms = "expected host:port, :port or [::1]:port";
constexpr size_t kMaxHostName = 253;  // RFC 1035, without the trailing dot
constexpr size_t kMaxLabel = 63;

std::optional<uint16_t> parse_port(std::string_view text) {
  unsigned value = 0;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (text.empty() || ec != std::errc() || end != text.data() + text.size() || value > 65535) {
    return std::nullopt;
  }
  return static_cast<uint16_t>(value);
}

std::vector<std::string_view> split(std::string_view text, char separator) {
  std::vector<std::string_view> parts;
  for (size_t start = 0;;) {
    const size_t end = text.find(separator, start);
    parts.push_back(text.substr(start, end == std::string_view::npos ? end : end - start));
    if (end == std::string_view::npos) return parts;
    start = end + 1;
  }
}

// inet_pton is pure (no resolver): four decimal numbers without leading zeros, exactly what Go's
// net.ParseIP takes (and so node_exporter); RFC 4291 text for IPv6.
bool is_ipv4_literal(std::string_view host) {
  in_addr addr{};
  return inet_pton(AF_INET, std::string(host).c_str(), &addr) == 1;
}

bool is_ipv6_literal(std::string_view host) {
  in6_addr addr{};
  return inet_pton(AF_INET6, std::string(host).c_str(), &addr) == 1;
}

// What the C library would read as an IPv4 address although Go would not: inet_aton's
// shorthands ("127.1", "0x7f.0.0.1", "017700000001", "2130706433"). getaddrinfo resolves such
// a "host name" to an address, Go's resolver looks it up in DNS and fails.
bool is_c_ipv4_shorthand(std::string_view host) {
  in_addr addr{};
  return inet_aton(std::string(host).c_str(), &addr) != 0;
}

// Host names as Go's isDomainName takes them: RFC 1123 labels (letters, digits, hyphens; 1..63
// each) plus "_", and at least one character that is not a digit. Anything that reads as an IPv4
// address in some notation but is not four plain decimal numbers is refused, not resolved: the
// same text must not listen here and fail in node_exporter.
std::optional<std::string> host_name_error(std::string_view host) {
  std::string_view name = host;
  if (!name.empty() && name.back() == '.') name.remove_suffix(1);
  const std::string quoted_host = quoted_value(host);
  if (name.empty() || name.size() > kMaxHostName) {
    return quoted_host + " is not an IP address or a host name";
  }
  const auto labels = split(name, '.');
  if (std::all_of(labels.begin(), labels.end(), all_digits) || is_c_ipv4_shorthand(host) ||
      is_c_ipv4_shorthand(name)) {
    return quoted_host +
           " is not a valid IPv4 address (four decimal numbers 0..255 without leading zeros, as "
           "Go's net.ParseIP reads them)";
  }
  for (std::string_view label : labels) {
    const bool valid_chars = std::all_of(label.begin(), label.end(), [](char c) {
      return std::isalnum(static_cast<unsigned char>(c)) != 0 || c == '-' || c == '_';
    });
    if (label.empty() || label.size() > kMaxLabel || !valid_chars || label.front() == '-' ||
        label.back() == '-') {
      return quoted_host + " is not an IP address or a host name";
    }
  }
  return std::nullopt;
}

}  // namespace

std::string ListenAddress::text() const {
  const std::string port_text = ":" + std::to_string(port);
  switch (kind) {
    case Kind::Any:
      return port_text;
    case Kind::IPv6:
      return "[" + host + "]" + port_text;
    case Kind::IPv4:
    case Kind::HostName:
      break;
  }
  return host + port_text;
}

Result<ListenAddress> parse_listen_address(std::string_view text) {
  if (text.find('\0') != std::string_view::npos) return Error{"contains a NUL byte"};
  std::string_view host, port_text;
  bool bracketed = false;
  if (!text.empty() && text.front() == '[') {
    const size_t close = text.find(']');
    if (close == std::string_view::npos) return Error{"missing \"]\" after the IPv6 address"};
    if (close + 1 >= text.size() || text[close + 1] != ':') {
      return Error{std::string("missing port (") + kExpectedForms + ")"};
    }
    host = text.substr(1, close - 1);
    port_text = text.substr(close + 2);
    bracketed = true;
  } else {
    const size_t colon = text.rfind(':');
    if (colon == std::string_view::npos)
      return Error{std::string("missing port (") + kExpectedForms + ")"};
    host = text.substr(0, colon);
    port_text = text.substr(colon + 1);
    if (host.find(':') != std::string_view::npos)
      return Error{"an IPv6 address needs brackets, e.g. [::1]:9478"};
  }
  const auto port = parse_port(port_text);
  if (!port) return Error{"port " + quoted_value(port_text) + " is not a number in 0..65535"};

  using Kind = ListenAddress::Kind;
  if (bracketed) {
    if (!is_ipv6_literal(host)) return Error{quoted_value(host) + " is not an IPv6 address"};
    // "[::]" means every interface, as in Go and Prometheus.
    if (host == "::") return ListenAddress{Kind::Any, "", *port};
    return ListenAddress{Kind::IPv6, std::string(host), *port};
  }
  if (host.empty()) return ListenAddress{Kind::Any, "", *port};
  if (is_ipv4_literal(host)) return ListenAddress{Kind::IPv4, std::string(host), *port};
  if (auto error = host_name_error(host)) return Error{*error};
  return ListenAddress{Kind::HostName, std::string(host), *port};
}

}  // namespace hucprof
