#pragma once
#include <string_view>

#include "log/log_line.h"

namespace hucprof {

// Sends every log line to stderr in `format` at `level` and above ("debug", "info", "warn",
// "error"), or, under systemd (stderr is the JOURNAL_STREAM), to journald over its native
// protocol with the line's priority and structured fields (log_fields.h). stdout is left to
// what a command prints as its result (doctor, version, --help). Called at start-up and again
// on SIGHUP; safe while other threads log.
void configure_logging(LogFormat format, std::string_view level);

// A line a command prints on stderr outside the log (a usage error, `report`'s refusal, the
// flame graph's path), made one printable line as every log line is: whatever path or value it
// quotes, it can neither act on the terminal nor become two lines.
void print_stderr_line(std::string_view line);

}  // namespace hucprof
