#pragma once
#include <vector>

#include <prometheus/metric_family.h>

#include "hucprof.pb.h"

namespace hucprof {

// usercopy_workload_cpu_seconds_total and usercopy_workload_busy_cpu_seconds_total: which
// workload (systemd unit, container, pod, cgroup) pays for the checks, and the busy CPU it had,
// under the same top-K names, so that a workload's share of its own CPU is a quotient of two
// series (sampling). usercopy_workload_checks_total and usercopy_workload_check_bytes_total:
// the exact checks by workload (probe mode with --probe.workloads).
void add_workload_families(const hucprof::v1::Snapshot& snapshot,
                           std::vector<prometheus::MetricFamily>& out);

}  // namespace hucprof
