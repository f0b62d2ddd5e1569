#pragma once
#include <cstdint>
#include <span>
#include <vector>

#include <prometheus/client_metric.h>

namespace hucprof {

// The `le` bounds of usercopy_check_duration_seconds are 2^k ns for k in
// [kLatencyFirstBoundLog2, kLatencyLastBoundLog2]: 8 ns (a cache-hot slab check) up to ~4.2 ms
// (a contended vmalloc-area search). They are fixed — the same for every call site and every
// scrape, whatever the data — because histogram_quantile() and recording rules need stable
// buckets; calls slower than the last bound are still counted in +Inf, _count and _sum.
inline constexpr int kLatencyFirstBoundLog2 = 3;
inline constexpr int kLatencyLastBoundLog2 = 22;

// Upper bounds in seconds, ascending, without +Inf.
std::vector<double> latency_bucket_bounds_seconds();

// BPF's log2 slots (slots[i] counts calls with floor(log2(ns)) == i, so slot i ends at
// 2^(i+1) ns) to a Prometheus histogram on the fixed bounds: cumulative counts, sum in seconds.
prometheus::ClientMetric::Histogram log2_slots_to_histogram(std::span<const uint64_t> slots,
                                                            uint64_t sum_ns);

}  // namespace hucprof
