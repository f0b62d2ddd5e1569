#pragma once
#include <optional>
#include <string>

#include "core/stack_profile.h"
#include "core/usercopy_cost.h"

namespace hucprof {

// The line beside probe mode's exact counts, worded the same in the report and the web view:
// "28,330 checks counted exactly; 36 ran while the program was busy on their CPU and were not
// counted (127 per 100,000: the kernel skipped the check's program and only counted them)", or,
// where the kernel counts none, why that number is unknown. nullopt without probes.
std::optional<std::string> missed_checks_line(const StackProfile& profile,
                                              const UsercopyCost& cost);

}  // namespace hucprof
