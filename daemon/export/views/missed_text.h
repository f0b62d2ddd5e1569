#pragma once
#include <optional>
#include <string>

#include "core/cost/usercopy_cost.h"
#include "core/symbols/stack_profile.h"

namespace hucprof {

// The line beside probe mode's exact counts, worded the same in the report and the web view:
// "28,330 checks counted exactly; 36 ran while the program was busy on their CPU and were not
// counted (127 per 100,000: the kernel skipped the check's program and only counted them)", or,
// where the kernel counts none, why that number is unknown. nullopt without probes.
std::optional<std::string> missed_checks_line(const StackProfile& profile,
                                              const UsercopyCost& cost);

// Sampling's counterpart, under the headline in the report and a fact in the web view: "7,503
// samples taken (busy and idle); 36 more were owed by the CPU clock and never ran the sampler
// (4.8 per 1,000 owed: the kernel skips ...; in no share)". The rate is left out for a recording
// of a target: the skips are every CPU's, the samples taken only the target's. nullopt where the
// profile does not count them (probe mode, files of older versions).
std::optional<std::string> skipped_samples_line(const StackProfile& profile);

}  // namespace hucprof
