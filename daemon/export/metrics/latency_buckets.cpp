#include "export/metrics/latency_buckets.h"

#include <cstdlib>
#include <string>

namespace hucprof {

std::vector<double> latency_bucket_bounds_seconds() {
  std::vector<double> bounds;
  for (int k = kLatencyFirstBoundLog2; k <= kLatencyLastBoundLog2; ++k) {
    // The double nearest to the exact decimal ("8192e-9"), not 8192 / 1e9 (one more rounding).
    // prometheus-cpp prints 16 significant digits, so 2^13 ns still reads as
    // le="8.192000000000001e-06"; what matters to queries is that it is the same every scrape.
    const std::string decimal = std::to_string(uint64_t{1} << k) + "e-9";
    bounds.push_back(std::strtod(decimal.c_str(), nullptr));
  }
  return bounds;
}

prometheus::ClientMetric::Histogram log2_slots_to_histogram(std::span<const uint64_t> slots,
                                                            uint64_t sum_ns) {
  prometheus::ClientMetric::Histogram histogram;
  const std::vector<double> bounds = latency_bucket_bounds_seconds();
  // Bound 2^k ns closes exactly at the end of slot k-1, so each cumulative count is exact.
  size_t next_slot = 0;
  uint64_t cumulative = 0;
  for (size_t b = 0; b < bounds.size(); ++b) {
    const size_t slots_below = static_cast<size_t>(kLatencyFirstBoundLog2) + b;
    for (; next_slot < slots_below && next_slot < slots.size(); ++next_slot) {
      cumulative += slots[next_slot];
    }
    histogram.bucket.push_back({cumulative, bounds[b]});
  }
  for (; next_slot < slots.size(); ++next_slot) cumulative += slots[next_slot];
  histogram.sample_count = cumulative;  // the serializer writes +Inf from this
  histogram.sample_sum = static_cast<double>(sum_ns) / 1e9;
  return histogram;
}

}  // namespace hucprof
