#include "export/listen_address.h"

#include <arpa/inet.h>
#include <netdb.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cctype>
#include <cerrno>
#include <charconv>
#include <cstring>
#include <optional>

namespace hucprof {
namespace {

constexpr const char* kExpectedForms = "expected host:port, :port or [::1]:port";

std::string lowercase_first(std::string text) {
  if (!text.empty()) text[0] = static_cast<char>(std::tolower(static_cast<unsigned char>(text[0])));
  return text;
}

std::optional<uint16_t> parse_port(std::string_view text) {
  unsigned value = 0;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (text.empty() || ec != std::errc() || end != text.data() + text.size() || value > 65535) {
    return std::nullopt;
  }
  return static_cast<uint16_t>(value);
}

bool is_ipv4_literal(const std::string& host) {
  in_addr addr{};
  return inet_pton(AF_INET, host.c_str(), &addr) == 1;
}

bool is_ipv6_literal(const std::string& host) {
  in6_addr addr{};
  return inet_pton(AF_INET6, host.c_str(), &addr) == 1;
}

std::string numeric_host(const sockaddr* addr, socklen_t length) {
  char buffer[NI_MAXHOST] = {};
  if (getnameinfo(addr, length, buffer, sizeof(buffer), nullptr, 0, NI_NUMERICHOST) != 0) return {};
  return buffer;
}

// Resolves a host name, preferring IPv4 like Go's net.Listen does for "localhost:port". No
// AI_ADDRCONFIG: it hides 127.0.0.1 on hosts whose only IPv4 address is loopback.
std::variant<ListenAddress, std::string> resolve(const std::string& host, uint16_t port) {
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  addrinfo* results = nullptr;
  if (const int rc = getaddrinfo(host.c_str(), nullptr, &hints, &results); rc != 0) {
    return "cannot resolve host \"" + host + "\": " + lowercase_first(gai_strerror(rc));
  }
  std::optional<ListenAddress> v4, v6;
  for (const addrinfo* ai = results; ai != nullptr; ai = ai->ai_next) {
    const std::string numeric = numeric_host(ai->ai_addr, ai->ai_addrlen);
    if (numeric.empty()) continue;
    if (ai->ai_family == AF_INET && !v4)
      v4 = ListenAddress{ListenAddress::Family::IPv4, numeric, port};
    if (ai->ai_family == AF_INET6 && !v6)
      v6 = ListenAddress{ListenAddress::Family::IPv6, numeric, port};
  }
  freeaddrinfo(results);
  if (v4) return *v4;
  if (v6) return *v6;
  return "host \"" + host + "\" has no IPv4 or IPv6 address";
}

class Socket {
 public:
  explicit Socket(int fd) : fd_(fd) {}
  ~Socket() {
    if (fd_ >= 0) close(fd_);
  }
  Socket(const Socket&) = delete;
  Socket& operator=(const Socket&) = delete;
  int get() const { return fd_; }

 private:
  int fd_;
};

// Binds and listens like civetweb (SO_REUSEADDR, and no IPV6_V6ONLY for the wildcard); returns
// errno, 0 on success. The socket is closed again right away.
int try_listen(int family, const sockaddr* addr, socklen_t length) {
  Socket sock(socket(family, SOCK_STREAM, IPPROTO_TCP));
  if (sock.get() < 0) return errno;
  const int on = 1;
  setsockopt(sock.get(), SOL_SOCKET, SO_REUSEADDR, &on, sizeof(on));
  if (bind(sock.get(), addr, length) != 0 || listen(sock.get(), 1) != 0) return errno;
  return 0;
}

int try_listen_ipv4(const std::string& host, uint16_t port) {
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(port);
  if (!host.empty()) inet_pton(AF_INET, host.c_str(), &addr.sin_addr);
  return try_listen(AF_INET, reinterpret_cast<const sockaddr*>(&addr), sizeof(addr));
}

int try_listen_ipv6(const std::string& host, uint16_t port) {
  sockaddr_in6 addr{};
  addr.sin6_family = AF_INET6;
  addr.sin6_port = htons(port);
  if (!host.empty()) inet_pton(AF_INET6, host.c_str(), &addr.sin6_addr);
  return try_listen(AF_INET6, reinterpret_cast<const sockaddr*>(&addr), sizeof(addr));
}

std::string errno_words(int error) { return lowercase_first(std::strerror(error)); }

}  // namespace

std::variant<ListenAddress, std::string> parse_listen_address(std::string_view text) {
  std::string host;
  std::string_view port_text;
  bool bracketed = false;
  if (!text.empty() && text.front() == '[') {
    const size_t close = text.find(']');
    if (close == std::string_view::npos) return "missing \"]\" after the IPv6 address";
    if (close + 1 >= text.size() || text[close + 1] != ':') {
      return std::string("missing port (") + kExpectedForms + ")";
    }
    host = std::string(text.substr(1, close - 1));
    port_text = text.substr(close + 2);
    bracketed = true;
  } else {
    const size_t colon = text.rfind(':');
    if (colon == std::string_view::npos)
      return std::string("missing port (") + kExpectedForms + ")";
    host = std::string(text.substr(0, colon));
    port_text = text.substr(colon + 1);
    if (host.find(':') != std::string::npos)
      return "an IPv6 address needs brackets, e.g. [::1]:9478";
  }
  const auto port = parse_port(port_text);
  if (!port) return "port \"" + std::string(port_text) + "\" is not a number in 0..65535";

  if (bracketed) {
    if (!is_ipv6_literal(host)) return "\"" + host + "\" is not an IPv6 address";
    // "[::]" means every interface, as in Go and Prometheus; civetweb spells that "+port".
    if (host == "::") return ListenAddress{ListenAddress::Family::Any, "", *port};
    return ListenAddress{ListenAddress::Family::IPv6, host, *port};
  }
  if (host.empty()) return ListenAddress{ListenAddress::Family::Any, "", *port};
  if (is_ipv4_literal(host)) return ListenAddress{ListenAddress::Family::IPv4, host, *port};
  return resolve(host, *port);
}

std::string civetweb_port_spec(const ListenAddress& address, bool ipv6_available) {
  const std::string port = std::to_string(address.port);
  switch (address.family) {
    case ListenAddress::Family::IPv4:
      return address.host + ":" + port;
    case ListenAddress::Family::IPv6:
      return "[" + address.host + "]:" + port;
    case ListenAddress::Family::Any:
      break;
  }
  return ipv6_available ? "+" + port : port;
}

bool ipv6_sockets_available() {
  const Socket sock(socket(AF_INET6, SOCK_STREAM, IPPROTO_TCP));
  return sock.get() >= 0;
}

std::string diagnose_listen_failure(const ListenAddress& address) {
  const std::string where = address.family == ListenAddress::Family::Any
                                ? "port " + std::to_string(address.port)
                                : civetweb_port_spec(address, false);
  int error = 0;
  switch (address.family) {
    case ListenAddress::Family::IPv4:
      error = try_listen_ipv4(address.host, address.port);
      break;
    case ListenAddress::Family::IPv6:
      error = try_listen_ipv6(address.host, address.port);
      if (error == 0) {
        // The kernel takes it, so the refusal is civetweb's: Debian's is built without IPv6.
        return "cannot listen on " + where +
               ": the embedded web server (civetweb) has no IPv6 support; use an IPv4 address";
      }
      break;
    case ListenAddress::Family::Any:
      error = try_listen_ipv4("", address.port);
      if (error == 0 && ipv6_sockets_available()) error = try_listen_ipv6("", address.port);
      break;
  }
  if (error != 0) return "cannot listen on " + where + ": " + errno_words(error);
  return "cannot listen on " + where + ": the embedded web server (civetweb) failed to start";
}

}  // namespace hucprof
