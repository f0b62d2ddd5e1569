#pragma once
#include "cli/options.h"

namespace hucprof {

// `hucprof record`: attach like `run` (same modes and flags), no HTTP server; record for
// --duration (default 30 s) or while COMMAND runs, then write one gzipped pprof file (-o). Ctrl-C
// ends the recording early and still writes it. Exit codes: 0 written, 1 cannot attach or
// write, 2 usage (bad -o directory, COMMAND not found).
int record_command(const RunOptions& run, const RecordOptions& record);

}  // namespace hucprof
