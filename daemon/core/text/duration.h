#pragma once
#include <chrono>
#include <optional>
#include <string>
#include <string_view>

#include "core/base/result.h"

namespace hucprof {

// Go/Prometheus-style durations: one or more <number><unit> groups, largest first or not
// ("10s", "500ms", "1m30s", "1.5s", "0"), units h, m, s, ms, us (µs), ns, as Go's
// time.ParseDuration. hucprof counts time in whole milliseconds, so a total that is not one is
// refused rather than silently rounded. Errors are in words, e.g. `"10" has no unit (…)`.
Result<std::chrono::milliseconds> parse_duration(std::string_view text);

// parse_duration, then at least `min` (and at most `max` when given); the error names the
// bounds: `"50ms" is below the minimum of 100ms`, `"25h" is out of range 1s..24h`.
Result<std::chrono::milliseconds> parse_duration_within(
    std::string_view text, std::chrono::milliseconds min,
    std::optional<std::chrono::milliseconds> max = std::nullopt);

// The inverse for messages and --help: "10s", "500ms", "1m30s".
std::string format_duration(std::chrono::milliseconds duration);

}  // namespace hucprof
