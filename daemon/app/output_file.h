#pragma once
#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include "core/base/result.h"
#include "core/files/file_text.h"
#include "core/files/output_target.h"
#include "kernel_edge/libbpf_ptr.h"

namespace hucprof {

// The file a command writes (`record -o`, `report --flamegraph`), opened before the work that
// fills it: a path that cannot be written is refused before anything is attached or printed,
// by trying (a file created beside it), not by guessing from permission bits. What is at the
// path decides how it is written (core/files/output_target.h): a new or regular file through a
// temporary file renamed into place, mode 0600 (like perf.data); a pipe, FIFO, /dev/null, a
// terminal (text only) or a symbolic link's target by writing into it; other devices and
// directories never.
class OutputFile {
 public:
  // The error names no path ("is a block device (8:0); ..."); callers say which flag it was.
  // `content`: what will be written (a terminal takes text only). `input`: a file the command
  // reads, which its output must not overwrite.
  static Result<OutputFile> open(const std::string& path, OutputContent content,
                                 std::optional<FileIdentity> input = {});

  OutputFile(OutputFile&& other) noexcept { *this = std::move(other); }
  OutputFile& operator=(OutputFile&& other) noexcept;
  OutputFile(const OutputFile&) = delete;
  OutputFile& operator=(const OutputFile&) = delete;
  ~OutputFile();  // a temporary file never committed is removed

  // Writes `bytes` and puts them in place, or says why not (exit 1: what was recorded is lost).
  // Once only.
  Result<void> commit(std::string_view bytes);

  const std::string& path() const { return path_; }

 private:
  OutputFile() = default;
  std::string path_;
  std::string temp_;  // Create and Replace: the temporary file beside path_
  UniqueFd fd_;
  OutputDecision::Action action_ = OutputDecision::Action::Refuse;
  bool regular_ = false;  // WriteInto a regular file: truncated first
};

}  // namespace hucprof
