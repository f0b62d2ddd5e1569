#include "export/metrics/program_cost_families.h"

#include <utility>

#include "export/metrics/family_builder.h"

namespace hucprof {

void add_program_cost_families(const hucprof::v1::Snapshot& snapshot,
                               std::vector<prometheus::MetricFamily>& out) {
  using prometheus::MetricType;
  FamilyBuilder enabled(
      "hucprof_bpf_stats_enabled",
      "Whether the kernel counts BPF program runs and run time (sysctl kernel.bpf_stats_enabled, "
      "never set by hucprof): hucprof_bpf_program_* have series only while this is 1.",
      MetricType::Gauge, {});
  if (snapshot.bpf_stats() != hucprof::v1::BPF_STATS_UNKNOWN) {
    enabled.add({}, snapshot.bpf_stats() == hucprof::v1::BPF_STATS_ON ? 1 : 0);
  }
  out.push_back(std::move(enabled).build());

  FamilyBuilder runs("hucprof_bpf_program_runs_total",
                     "Runs of each of hucprof's BPF programs, as the kernel counts them (bpf_stats "
                     "run_cnt, while kernel.bpf_stats_enabled=1).",
                     MetricType::Counter, {"program"});
  FamilyBuilder seconds(
      "hucprof_bpf_program_run_seconds_total",
      "CPU time spent running each of hucprof's BPF programs, as the kernel measures it "
      "(bpf_stats run_time_ns; excludes the kprobe or trampoline entry around the program).",
      MetricType::Counter, {"program"});
  for (const auto& program : snapshot.bpf_programs()) {
    runs.add({program.program()}, static_cast<double>(program.runs()));
    seconds.add({program.program()}, static_cast<double>(program.run_ns()) / 1e9);
  }
  out.push_back(std::move(runs).build());
  out.push_back(std::move(seconds).build());
}

}  // namespace hucprof
