#pragma once
#include <cstddef>
#include <functional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "core/base/result.h"

namespace hucprof {

// A reader of the Prometheus text exposition format (0.0.4), for a page that comes from outside
// (`hucprof top --from URL`): any bytes may arrive, so every line is bounded and judged, and
// nothing of it reaches a message unescaped. Only the families the caller wants are parsed in
// full; of every other line only its metric name is looked at, so exposition features this
// reader does not know (exemplars, quoted names) cannot make a page unreadable.

struct MetricSample {
  std::string_view name;
  std::vector<std::pair<std::string, std::string>> labels;  // values unescaped, in page order
  double value = 0;                                         // NaN and ±Inf as the page says
};

// Bounds of one sample line of a wanted family: more is not a page hucprof wrote.
inline constexpr size_t kMaxMetricLabels = 32;
inline constexpr size_t kMaxLabelValueBytes = 4096;

// Calls `take` with every sample line whose metric name `wanted` accepts, in page order. The
// first line of a wanted family that is not the format, or that `take` refuses, ends the
// reading: "line N: words" (never the line's bytes).
Result<void> read_metrics_text(std::string_view text,
                               const std::function<bool(std::string_view name)>& wanted,
                               const std::function<Result<void>(const MetricSample&)>& take);

}  // namespace hucprof
