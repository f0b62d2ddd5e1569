#pragma once
#include <spdlog/spdlog.h>

#include "core/base/result.h"

namespace hucprof {

// How `run` and `record` end on an Error: its words as the one error line of the log (stderr
// unless journald), then its exit code for main to return.
inline int log_and_exit_code(const Error& error) {
  spdlog::error("{}", error.text);
  return error.exit_code;
}

}  // namespace hucprof
