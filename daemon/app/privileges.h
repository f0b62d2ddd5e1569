#pragma once
#include <string>

#include "cli/options.h"
#include "core/kernel/privilege_plan.h"

namespace hucprof {

// The calling thread's capability sets, as /proc/self/status shows them.
CapabilitySets read_capability_sets();

// Carries out the plan and sets no_new_privs. Capabilities belong to each thread and a thread
// inherits its creator's, so this runs while hucprof is single-threaded, before the web server
// starts; it refuses otherwise. Returns "" when the sets read back are what the plan says, else
// what went wrong, in words.
std::string drop_privileges(const PrivilegePlan& plan);

// Plans from this process's sets and the options, drops, and logs the outcome in one line.
// False (logged as an error) when the drop failed: the caller exits 1 rather than run with
// privileges it was told to give up.
bool drop_to_least_privilege(const RunOptions& options);

// One log line: what was kept, dropped and why ("capabilities: kept cap_syslog; dropped …").
std::string describe_privileges(const CapabilitySets& before, const PrivilegePlan& plan);

}  // namespace hucprof
