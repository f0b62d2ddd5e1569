#pragma once
#include "cli/options.h"

namespace hucprof {

// `hucprof run`: attach, serve /metrics, drain every interval until SIGINT/SIGTERM.
// Exit codes: 0 clean stop, 1 nothing could attach / runtime failure.
int run_command(const RunOptions& options);

}  // namespace hucprof
