#pragma once
#include "cli/options.h"

namespace hucprof {

// `hucprof doctor`: one screen on what this kernel allows and what `run` will do. Attaches
// nothing but a do-nothing fentry test program for a moment. Exit 0 when `run` with the given
// mode would start, 1 when it would not.
int doctor_command(const RunOptions& options);

}  // namespace hucprof
