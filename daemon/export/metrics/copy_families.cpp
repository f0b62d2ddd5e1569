#include "export/metrics/copy_families.h"

#include "core/kernel/cpu_time.h"
#include "export/metrics/family_builder.h"

namespace hucprof {

void add_copy_families(const hucprof::v1::Snapshot& snapshot,
                       std::vector<prometheus::MetricFamily>& out) {
  if (!snapshot.debuginfo()) return;
  using prometheus::MetricType;
  FamilyBuilder checks(
      "usercopy_copy_checks_total",
      "Hardened-usercopy checks by kernel call site, syscall, direction and the copy function "
      "they were reached through (copy_to_iter, copy_from_user, ...; from the kernel's "
      "debuginfo). Sums over copy to usercopy_checks_total.",
      MetricType::Counter, {"callsite", "syscall", "direction", "copy"});
  for (const auto& s : snapshot.copy_checks()) {
    checks.add({s.callsite(), s.syscall(), s.direction(), s.copy()},
               static_cast<double>(s.calls()));
  }
  out.push_back(std::move(checks).build());

  FamilyBuilder seconds(
      "usercopy_copy_cpu_seconds_total",
      "CPU time inside hardened-usercopy check functions (samples x sampling period, summed over "
      "CPUs) by kernel call site, syscall and the copy function the check was reached through "
      "(from the kernel's debuginfo). Sums over copy to usercopy_cpu_seconds_total.",
      MetricType::Counter, {"callsite", "syscall", "copy"});
  for (const auto& s : snapshot.copy_cpu_samples()) {
    seconds.add({s.callsite(), s.syscall(), s.copy()},
                cpu_clock_seconds(s.samples(), snapshot.sample_frequency_hz()));
  }
  out.push_back(std::move(seconds).build());

  FamilyBuilder held(
      "hucprof_debuginfo_held_stacks",
      "Stacks whose source lines are still being looked up in the kernel's debuginfo: their "
      "profile samples and their part of the usercopy_copy_* series come in a later drain (the "
      "copy series lag the checks until this is 0).",
      MetricType::Gauge, {});
  held.add({}, static_cast<double>(snapshot.debuginfo_held_stacks()));
  out.push_back(std::move(held).build());
}

}  // namespace hucprof
