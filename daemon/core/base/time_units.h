#pragma once
#include <cstdint>

namespace hucprof {

// The kernel's clocks count nanoseconds; people read seconds.
inline constexpr uint64_t kNanosPerSecond = 1'000'000'000;

constexpr double ns_to_seconds(double ns) { return ns / static_cast<double>(kNanosPerSecond); }

}  // namespace hucprof
