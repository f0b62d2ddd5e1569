#pragma once
#include "cli/options.h"

namespace hucprof {

// `hucprof report FILE [--flamegraph OUT.svg]`: the cost table, top stacks and verdict of a
// recorded profile on stdout. Exit codes: 0 printed, 2 FILE unreadable, corrupt, truncated or not
// a usercopy profile (one line saying which), 1 the flame graph could not be written.
int report_command(const ReportOptions& options);

}  // namespace hucprof
