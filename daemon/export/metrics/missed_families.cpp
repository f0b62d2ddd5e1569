#include "export/metrics/missed_families.h"

#include <utility>

#include "export/metrics/family_builder.h"

namespace hucprof {

void add_missed_families(const hucprof::v1::Snapshot& snapshot,
                         std::vector<prometheus::MetricFamily>& out) {
  using prometheus::MetricType;
  FamilyBuilder checks(
      "usercopy_checks_missed_total",
      "Checks (__check_object_size calls) the kernel ran while hucprof's check program was busy "
      "on their CPU, so it skipped the program and only counted them, by the kernel's counter: "
      "recursion (bpf_prog_info recursion_misses), kprobe_missed (the kprobe's missed count). Not "
      "in usercopy_checks_total; the two sum to the kernel's count. No series where the kernel "
      "does not count them (hucprof_missed_runs_info).",
      MetricType::Counter, {"reason"});
  for (const auto& series : snapshot.missed()) {
    if (series.what() == "checks") {
      checks.add({series.reason()}, static_cast<double>(series.count()));
    }
  }
  out.push_back(std::move(checks).build());

  FamilyBuilder rescued(
      "hucprof_probe_rescued_checks_total",
      "Checks the kernel skipped hucprof's check program for (a preempted run of it held the "
      "CPU), counted by its rescue program instead: they are in usercopy_checks_total.",
      MetricType::Counter, {});
  if (snapshot.has_rescued_checks()) {
    rescued.add({}, static_cast<double>(snapshot.rescued_checks()));
  }
  out.push_back(std::move(rescued).build());

  FamilyBuilder info(
      "hucprof_missed_runs_info",
      "For each kind of hucprof program loaded (what it counts: checks, subchecks, latency, "
      "samples), whether the kernel counts the runs of it that it skips (counted \"yes\"/\"no\") "
      "and, if not, why in words. Always 1.",
      MetricType::Gauge, {"what", "counted", "reason"});
  for (const auto& coverage : snapshot.missed_coverage()) {
    info.add({coverage.what(), coverage.counted() ? "yes" : "no", coverage.uncounted()}, 1);
  }
  out.push_back(std::move(info).build());
}

}  // namespace hucprof
