#pragma once
#include <string>
#include <vector>

#include "cli/options.h"
#include "debuginfo/kernel_debuginfo.h"

namespace hucprof {

// The debuginfo settings of `run`, `record` and `doctor` for the running kernel.
DebuginfoSettings debuginfo_settings(const RunOptions& options, const std::string& release);

// What `run` logs at start: which file gives the call sites their copy functions and lines, or
// why none does and the command that installs it.
void log_debuginfo(const DebuginfoReport& report);

// doctor's "Debuginfo" section: what was found, where it looked, for the loaded modules too,
// and the one command that installs it on this distribution.
void print_debuginfo(KernelDebuginfo& debuginfo, const std::vector<std::string>& modules);

// The names of the modules in /proc/modules text.
std::vector<std::string> loaded_modules(const std::string& proc_modules);

}  // namespace hucprof
