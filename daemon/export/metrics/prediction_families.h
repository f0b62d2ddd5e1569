#pragma once
#include <vector>

#include <prometheus/metric_family.h>

#include "hucprof.pb.h"

namespace hucprof {

// The "what would hardened_usercopy=off save" families (Snapshot.predictions and their busy-CPU
// denominator), appended to `out`. Every family is emitted, empty when there is no prediction.
void add_prediction_families(const hucprof::v1::Snapshot& snapshot,
                             std::vector<prometheus::MetricFamily>& out);

}  // namespace hucprof
