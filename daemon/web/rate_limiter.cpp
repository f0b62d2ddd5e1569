#include "web/rate_limiter.h"

#include <algorithm>

namespace hucprof {

RateLimiter::RateLimiter(std::chrono::milliseconds interval, unsigned burst, Clock::time_point now)
    : interval_(interval), burst_(burst), tokens_(burst), last_(now) {}

bool RateLimiter::allow(Clock::time_point now) {
  std::lock_guard lock(mutex_);
  if (now > last_) {
    tokens_ = std::min(burst_, tokens_ + (now - last_) / interval_);
    last_ = now;
  }
  if (tokens_ < 1.0) return false;
  tokens_ -= 1.0;
  return true;
}

}  // namespace hucprof
