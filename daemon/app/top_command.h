#pragma once
#include "cli/options.h"

namespace hucprof {

// `hucprof top`: the call sites ranked by their share of busy CPU, with their samples and 95 %
// intervals (and probe mode's exact checks), refreshed every --delay. Reads a running daemon's
// /metrics with --from URL, or attaches its own programs as `record` does. On a terminal: a
// full screen (q quits, c toggles since start / last interval, the window's size followed);
// otherwise one plain table per refresh. Exit codes: 0 after q, a signal or --iterations; 1
// cannot attach or reach the daemon at first; 2 a page that is no hucprof daemon's, a bad file.
int top_command(const RunOptions& run, const TopOptions& top);

}  // namespace hucprof
