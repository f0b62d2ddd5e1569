#pragma once
#include "cli/options.h"

namespace hucprof {

// `hucprof report FILE [--flamegraph OUT.svg]`: the cost table, top stacks and verdict of a
// recorded profile on stdout; with --sort/--percent-limit the checks by the keys given, with
// --diff BASE the change of each share from BASE, with --folded the folded stacks instead. Exit
// codes: 0 printed, 2 FILE unreadable, corrupt, truncated or not a usercopy profile (one line
// saying which), or a flag that does not fit the profile (--sort comm without comm labels, --diff
// of an unsampled profile), 1 the flame graph could not be written.
int report_command(const ReportOptions& options);

}  // namespace hucprof
