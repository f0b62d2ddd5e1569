#pragma once
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>

#include "core/result.h"

namespace hucprof {

// Which file a path named when it was read: two paths are the same file when these match.
struct FileIdentity {
  uint64_t device = 0;
  uint64_t inode = 0;
  bool operator==(const FileIdentity&) const = default;
};

// The whole of a regular file of at most max_bytes: every file hucprof reads whole (a config,
// a web config, a certificate, a profile, a file of procfs or sysfs). Anything else is refused
// before a byte is read: a FIFO would block forever (it is opened without waiting for a
// writer), /dev/zero never ends, and opening never makes a terminal ours. The error names no
// path, callers say which file it was: strerror's words ("No such file or directory", "Is a
// directory"), "not a regular file" or "larger than N bytes". `identity`, when given, is set to
// the file read (report never writes its output over its input).
Result<std::string> read_regular_file(const std::string& path, size_t max_bytes,
                                      FileIdentity* identity = nullptr);

// A small kernel file (procfs, sysfs) whose absence is an answer, not a failure: its text
// through read_regular_file, or nullopt.
std::optional<std::string> read_file_text(const std::string& path);

}  // namespace hucprof
