#pragma once
#include <chrono>
#include <cstddef>
#include <functional>
#include <string>

#include "core/base/result.h"
#include "core/text/metrics_url.h"

namespace hucprof {

// One GET of a daemon's /metrics for `hucprof top --from URL`: the answer is outside input, so
// the whole exchange has a deadline, the head and the body a bound, and any failure is one line
// ("GET http://node:9478/metrics: connection refused"). https verifies the server's certificate
// (the system's CA store, or `ca_pem`) and its name or address, as curl does.
struct FetchOptions {
  std::chrono::milliseconds timeout{5000};
  size_t max_body = size_t{16} << 20;
  std::string ca_pem;    // PEM text of the CAs to trust instead of the system's; "" the system's
  std::string password;  // basic auth, with the URL's user
  std::string user_agent = "hucprof";
};

// The body of a 200 answer. `keep_going` is asked every 100 ms or so: false abandons the
// request at once (Error "cancelled"), so a key or a signal is not kept waiting for the
// deadline.
Result<std::string> fetch_metrics(const MetricsUrl& url, const FetchOptions& options,
                                  const std::function<bool()>& keep_going);

}  // namespace hucprof
