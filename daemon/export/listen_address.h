#pragma once
#include <cstdint>
#include <string>
#include <string_view>
#include <variant>

namespace hucprof {

// A --web.listen-address value ("host:port", ":port", "[::1]:port"), parsed and with the host
// resolved to a numeric address, because civetweb's "listening_ports" option only takes numeric
// addresses.
struct ListenAddress {
  enum class Family { Any, IPv4, IPv6 };
  Family family = Family::Any;  // Any: all interfaces (":port", "[::]:port")
  std::string host;             // numeric, without brackets; empty for Any
  uint16_t port = 0;            // 0: pick a free port
};

// Errors are in words without the flag name, e.g. `port "x" is not a number in 0..65535`.
std::variant<ListenAddress, std::string> parse_listen_address(std::string_view text);

// civetweb's spelling: "127.0.0.1:9478", "[::1]:9478", and for all interfaces "+9478" (IPv4
// and IPv6 on one socket) or, where the kernel has no IPv6, "9478" (IPv4 only).
std::string civetweb_port_spec(const ListenAddress& address, bool ipv6_available);

// Whether this kernel can create IPv6 sockets at all (IPv6 may be disabled or compiled out).
bool ipv6_sockets_available();

// Why the web server could not listen on `address`, in words: binds a socket the way civetweb
// does and reports the kernel's answer (e.g. "address already in use"), because civetweb itself
// only says that it failed.
std::string diagnose_listen_failure(const ListenAddress& address);

}  // namespace hucprof
