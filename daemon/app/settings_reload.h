#pragma once
#include <functional>

#include "cli/options.h"

namespace hucprof {

// Parses the command line again (flags and --config FILE, exactly as at start-up).
using SettingsSource = std::function<ParseOutcome()>;

// SIGHUP: re-reads the settings through the same parser and validation as start-up and logs
// what changed. Settings marked OnReload::Live (log.level, log.format, interval, top-k) take
// effect — logging at once, the rest through the returned options; the others are named as
// taking effect at restart and keep their running value. A file the parser refuses leaves
// everything as it was. Returns the settings now in force.
RunOptions reload_settings(const RunOptions& running, const SettingsSource& source);

}  // namespace hucprof
