#pragma once
#include "app/settings_reload.h"
#include "cli/options.h"

namespace hucprof {

// `hucprof run`: attach, serve /metrics, drain every interval until SIGINT/SIGTERM; SIGHUP
// re-reads the settings from `source`. Exit codes: 0 clean stop, 1 nothing could attach /
// runtime failure.
int run_command(const RunOptions& options, const SettingsSource& source);

}  // namespace hucprof
