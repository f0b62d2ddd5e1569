#pragma once
#include <vector>

#include <prometheus/metric_family.h>

#include "hucprof.pb.h"

namespace hucprof {

// hucprof_bpf_stats_enabled, hucprof_bpf_program_runs_total and
// hucprof_bpf_program_run_seconds_total: what each of hucprof's BPF programs costs the kernel.
// The per-program families have series only while the kernel counts (bpf_stats on); the gauge
// says whether it does, and is absent when the sysctl cannot be read.
void add_program_cost_families(const hucprof::v1::Snapshot& snapshot,
                               std::vector<prometheus::MetricFamily>& out);

}  // namespace hucprof
