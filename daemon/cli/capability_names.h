#pragma once
#include <string>
#include <string_view>

#include "core/base/result.h"
#include "core/kernel/privilege_plan.h"

namespace hucprof {

// --capabilities.keep: "all", "none", or a comma-separated list of capability names as
// capabilities(7) spells them, case-insensitive, "cap_" optional ("cap_syslog,cap_bpf",
// "SYSLOG"). Errors are in words, e.g. `"cap_sysadmin" is not a capability (e.g. cap_syslog…)`.
Result<CapabilityKeep> parse_capability_keep(std::string_view text);

// "all", "none" or "cap_bpf,cap_syslog" (by capability number): what parse_capability_keep reads.
std::string format_capability_keep(const CapabilityKeep& keep);

// "cap_bpf, cap_syslog" for messages; "none" when empty.
std::string capability_names(CapabilityMask mask);

}  // namespace hucprof
