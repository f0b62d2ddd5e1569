#pragma once
#include <cstddef>
#include <cstdint>
#include <optional>
#include <streambuf>
#include <string>

#include "core/base/result.h"
#include "core/base/unique_fd.h"

namespace hucprof {

// Which file a path named when it was read: two paths are the same file when these match.
struct FileIdentity {
  uint64_t device = 0;
  uint64_t inode = 0;
  bool operator==(const FileIdentity&) const = default;
};

// A regular file open for reading, as open_regular_file hands it out.
struct RegularFile {
  UniqueFd fd;
  uint64_t size = 0;  // when opened
  FileIdentity identity;
};

// The one way hucprof opens a file to read (a config, a web config, a certificate, a profile,
// a file of procfs or sysfs, kallsyms, a debuginfo file): only a regular file of at most
// max_bytes. The name is resolved without opening what it names (O_PATH), so anything else is
// refused before its driver or pipe sees an open: a FIFO would block forever, /dev/zero never
// ends, a watchdog device arms when opened, and a terminal never becomes ours. The file is then
// opened through that descriptor (O_NONBLOCK, O_NOCTTY), so the file read is the file looked
// at. The error names no path, callers say which file it was: strerror's words ("No such file
// or directory", "Is a directory", "Too many levels of symbolic links", "Permission denied"),
// "not a regular file" or "larger than N bytes".
Result<RegularFile> open_regular_file(const std::string& path, uint64_t max_bytes);

// The whole of a regular file of at most max_bytes, opened by open_regular_file: every file
// hucprof reads whole. `identity`, when given, is set to the file read (report never writes its
// output over its input).
Result<std::string> read_regular_file(const std::string& path, size_t max_bytes,
                                      FileIdentity* identity = nullptr);

// A small kernel file (procfs, sysfs) whose absence is an answer, not a failure: its text
// through read_regular_file, or nullopt.
std::optional<std::string> read_file_text(const std::string& path);

// A regular file's bytes as a stream, read in pieces: for a large file parsed line by line
// (kallsyms) that need not be in memory whole. The stream ends at max_bytes, and exceeded()
// says it did; error() is the errno of a read that failed, 0 when none did.
class FileStreamBuf : public std::streambuf {
 public:
  FileStreamBuf(RegularFile file, uint64_t max_bytes);
  bool exceeded() const { return exceeded_; }
  int error() const { return error_; }

 protected:
  int_type underflow() override;

 private:
  RegularFile file_;
  uint64_t left_;
  bool exceeded_ = false;
  int error_ = 0;
  char buffer_[1 << 16];
};

}  // namespace hucprof
