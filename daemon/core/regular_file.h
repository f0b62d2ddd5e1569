#pragma once
#include <cstddef>
#include <cstdint>
#include <string>

namespace hucprof {

// Which file a path named when it was opened: two paths are the same file when these match.
struct FileIdentity {
  uint64_t device = 0;
  uint64_t inode = 0;
  bool operator==(const FileIdentity&) const = default;
};

struct RegularFile {
  std::string bytes;
  // Why it could not be read: strerror's words ("No such file or directory", "Is a directory"),
  // "not a regular file" or "larger than N bytes"; "" when it was read.
  std::string error;
  FileIdentity identity;
};

// The whole of a regular file of at most max_bytes (a config, a web config, a profile). Anything
// else is refused before a byte is read: a FIFO would block forever (it is opened without
// waiting for a writer), /dev/zero never ends, and opening never makes a terminal ours.
RegularFile read_regular_file(const std::string& path, size_t max_bytes);

}  // namespace hucprof
