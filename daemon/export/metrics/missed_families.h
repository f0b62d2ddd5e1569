#pragma once
#include <vector>

#include <prometheus/metric_family.h>

#include "hucprof.pb.h"

namespace hucprof {

// usercopy_checks_missed_total{reason}: the checks the kernel ran while the check's program was
// busy on their CPU, which it skipped and only counted (so no usercopy_checks_total series has
// them; the two families sum to the kernel's own count of __check_object_size). Series exist only
// for what the kernel counts. hucprof_missed_runs_info{what,counted,reason}: for each kind of
// program loaded, whether the kernel counts its skipped runs, and if not why.
void add_missed_families(const hucprof::v1::Snapshot& snapshot,
                         std::vector<prometheus::MetricFamily>& out);

}  // namespace hucprof
