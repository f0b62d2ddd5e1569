#pragma once
#include <chrono>
#include <mutex>

namespace hucprof {

// The web config's rate_limit: a token bucket of `burst` tokens, one added per `interval`, as
// golang.org/x/time/rate does for exporter-toolkit. A request without a token gets 429.
class RateLimiter {
 public:
  using Clock = std::chrono::steady_clock;
  RateLimiter(std::chrono::milliseconds interval, unsigned burst,
              Clock::time_point now = Clock::now());
  bool allow(Clock::time_point now = Clock::now());

 private:
  std::mutex mutex_;
  std::chrono::duration<double> interval_;
  double burst_;
  double tokens_;
  Clock::time_point last_;
};

}  // namespace hucprof
