#pragma once
#include <cstddef>
#include <string>

namespace hucprof {

struct FileBytes {
  std::string bytes;
  std::string error;  // why the file could not be read, in words; "" when it could
};

// A whole regular file of at most max_bytes (a profile to report on, a fuzz input).
FileBytes read_file_bytes(const std::string& path, size_t max_bytes);

// Writes through a temporary file in the same directory and renames it into place, so a reader
// never sees half a profile and an interrupted write leaves the old file. "" or the error.
std::string write_file_atomically(const std::string& path, const std::string& bytes);

// Whether `path` could be written (its directory exists and lets us create a file there): checked
// before recording, so a typo in -o does not cost the whole recording.
std::string check_writable(const std::string& path);

}  // namespace hucprof
