#pragma once
#include <cstdint>
#include <string>
#include <string_view>

#include "core/base/result.h"

namespace hucprof {

// A --web.listen-address value, checked without touching the network: ":9478" and "[::]:9478"
// (every interface, IPv4 and IPv6), "127.0.0.1:9478", "[::1]:9478", "localhost:9478". Host names
// are only checked for their spelling here; they are resolved when the server starts.
struct ListenAddress {
  enum class Kind { Any, IPv4, IPv6, HostName };
  Kind kind = Kind::Any;
  std::string host;   // without brackets; empty for Any
  uint16_t port = 0;  // 0: pick a free port

  // How people write it back: ":9478", "127.0.0.1:9478", "[::1]:9478", "localhost:9478".
  std::string text() const;
};

// Errors are in words without the flag name, e.g. `port "x" is not a number in 0..65535`.
Result<ListenAddress> parse_listen_address(std::string_view text);

}  // namespace hucprof
