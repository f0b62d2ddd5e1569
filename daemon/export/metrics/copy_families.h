#pragma once
#include <vector>

#include <prometheus/metric_family.h>

#include "hucprof.pb.h"

namespace hucprof {

// usercopy_copy_checks_total and usercopy_copy_cpu_seconds_total: the checks and the CPU time of
// each call site by the copy function it reached them through (debuginfo only). Without the
// kernel's debuginfo they are not exported at all, HELP and TYPE included: the output is then
// what it is without this feature.
void add_copy_families(const hucprof::v1::Snapshot& snapshot,
                       std::vector<prometheus::MetricFamily>& out);

}  // namespace hucprof
