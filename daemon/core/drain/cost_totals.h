#pragma once
#include <cstdint>
#include <map>
#include <set>
#include <string>

namespace hucprof {

// One cost counter per call site label since start, as the aggregator holds it: every label it
// ever counted, exported or not (a label out of the top-K keeps its value, and what came after
// is "other"'s), and which of them the snapshot names now.
struct CallsiteTotals {
  std::map<std::string, uint64_t> by_callsite;
  std::set<std::string> exported;
};

// The aggregator's cumulative counters a cost estimate is a quotient of (core/cost/
// speedup_prediction.h): the checks' CPU samples over the busy (kernel + user) samples, and the
// time inside the checks (--latency, in ns).
struct CostTotals {
  CallsiteTotals check_samples;
  uint64_t busy_samples = 0;
  CallsiteTotals check_ns;
};

}  // namespace hucprof
