#pragma once
#include <cstdint>
#include <string>
#include <string_view>

#include "core/base/result.h"
#include "core/text/listen_address.h"

namespace hucprof {

// Where `hucprof top --from URL` reads a daemon's counters: http:// or https://, a host (an IP
// address or a host name, as --web.listen-address spells them) with an optional port (80 and
// 443 as URLs have them), and a path, /metrics when there is none. A user name before "@" is
// sent with basic auth; a password never is read from the URL (argv is visible to every user
// in ps), the caller takes it from elsewhere.
struct MetricsUrl {
  bool tls = false;
  ListenAddress address;  // IPv4, IPv6 or HostName, a port above 0
  std::string target;     // "/metrics", or the path and query given
  std::string user;       // percent-decoded; empty: no basic auth

  // Without the user: what messages and the screen show.
  std::string text() const;
};

// Errors in words without the flag's name, e.g. `"ftp" is not http or https`.
Result<MetricsUrl> parse_metrics_url(std::string_view text);

}  // namespace hucprof
