#include "export/metrics/workload_families.h"

#include "core/kernel/cpu_time.h"
#include "export/metrics/family_builder.h"

namespace hucprof {

void add_workload_families(const hucprof::v1::Snapshot& snapshot,
                           std::vector<prometheus::MetricFamily>& out) {
  using prometheus::MetricType;
  const uint64_t hz = snapshot.sample_frequency_hz();
  FamilyBuilder checks(
      "usercopy_workload_cpu_seconds_total",
      "CPU time inside hardened-usercopy check functions (samples x sampling period, summed over "
      "CPUs) by workload: the systemd unit, container, Kubernetes pod or cgroup of the task that "
      "ran the check. The top-K workloads by this time are named, the rest summed into "
      "workload=\"other\".",
      MetricType::Counter, {"workload", "workload_kind"});
  FamilyBuilder busy(
      "usercopy_workload_busy_cpu_seconds_total",
      "Busy CPU time (kernel + user, the checks included; samples x sampling period) by "
      "workload, under the names of usercopy_workload_cpu_seconds_total: the denominator of a "
      "workload's share.",
      MetricType::Counter, {"workload", "workload_kind"});
  for (const auto& s : snapshot.workloads()) {
    checks.add({s.workload(), s.workload_kind()}, cpu_clock_seconds(s.check_samples(), hz));
    busy.add({s.workload(), s.workload_kind()}, cpu_clock_seconds(s.busy_samples(), hz));
  }
  out.push_back(std::move(checks).build());
  out.push_back(std::move(busy).build());

  FamilyBuilder calls(
      "usercopy_workload_checks_total",
      "Hardened-usercopy checks (probe mode, exact) by workload: the systemd unit, container, "
      "Kubernetes pod or cgroup of the task that ran the check (--probe.workloads). The top-K "
      "workloads by checks are named, the rest summed into workload=\"other\".",
      MetricType::Counter, {"workload", "workload_kind"});
  FamilyBuilder bytes("usercopy_workload_check_bytes_total",
                      "Bytes the checks of usercopy_workload_checks_total were asked about, under "
                      "the same names.",
                      MetricType::Counter, {"workload", "workload_kind"});
  for (const auto& s : snapshot.workload_checks()) {
    calls.add({s.workload(), s.workload_kind()}, static_cast<double>(s.calls()));
    bytes.add({s.workload(), s.workload_kind()}, static_cast<double>(s.bytes()));
  }
  out.push_back(std::move(calls).build());
  out.push_back(std::move(bytes).build());
}

}  // namespace hucprof
