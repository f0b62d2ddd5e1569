#include "export/missed_text.h"

#include <cstdio>

#include "export/report_text.h"

namespace hucprof {

std::optional<std::string> missed_checks_line(const StackProfile& profile,
                                              const UsercopyCost& cost) {
  if (!profile.probes) return std::nullopt;
  std::string out = format_count_exact(cost.calls) + " checks counted exactly; ";
  if (profile.missed_checks.empty()) {
    if (profile.missed_checks_uncounted.empty()) return std::nullopt;
    return out + "how many ran while the program was busy on their CPU is unknown here: " +
           profile.missed_checks_uncounted;
  }
  uint64_t missed = 0;
  for (const auto& [reason, n] : profile.missed_checks) missed += n;
  if (missed == 0) return out + "none ran while the program was busy on their CPU";
  char rate[64];
  std::snprintf(rate, sizeof(rate), "%.0f",
                1e5 * static_cast<double>(missed) / static_cast<double>(missed + cost.calls));
  return out + format_count_exact(missed) +
         " ran while the program was busy on their CPU and were not counted (" + rate +
         " per 100,000: the kernel skipped the check's program and only counted them)";
}

}  // namespace hucprof
