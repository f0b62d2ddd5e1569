#include "export/views/missed_text.h"

#include <cstdio>

#include "export/views/report_text.h"

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

std::optional<std::string> skipped_samples_line(const StackProfile& profile) {
  if (!profile.sampling || !profile.skipped_samples) return std::nullopt;
  uint64_t taken = 0;
  for (const auto& [context, n] : profile.sampled_by_context) taken += n;
  const uint64_t skipped = *profile.skipped_samples;
  // A recording of a target counts the target's samples only, which are never idle ones.
  std::string out =
      format_count_exact(taken) + (profile.target.empty() ? " samples taken (busy and idle); "
                                                          : " samples of the target taken; ");
  if (skipped == 0) {
    return out + "none skipped: the sampler ran for every sample the CPU clock owed";
  }
  out +=
      format_count_exact(skipped) + " more were owed by the CPU clock and never ran the sampler (";
  if (profile.target.empty()) {
    char rate[64];
    std::snprintf(rate, sizeof(rate), "%.1f",
                  1e3 * static_cast<double>(skipped) /
                      (static_cast<double>(skipped) + static_cast<double>(taken)));
    out += std::string(rate) + " per 1,000 owed: ";
  } else {
    out += "on every CPU, not only the target's: ";
  }
  return out +
         "the kernel skips the program while another BPF program or a bpf() map operation holds "
         "the CPU; in no share)";
}

}  // namespace hucprof
