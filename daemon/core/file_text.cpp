#include "core/file_text.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

namespace hucprof {
namespace {

// Far above any procfs or sysfs file hucprof reads (/proc/stat of a large host is well under a
// megabyte); only a bound, since such files report no size to check beforehand.
constexpr size_t kMaxKernelFileBytes = size_t{16} << 20;

}  // namespace

Result<std::string> read_regular_file(const std::string& path, size_t max_bytes,
                                      FileIdentity* identity) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);
  if (fd < 0) return Error{std::strerror(errno)};
  struct Closer {
    int fd;
    ~Closer() { ::close(fd); }
  } closer{fd};
  struct stat st {};
  if (::fstat(fd, &st) != 0) return Error{std::strerror(errno)};
  if (S_ISDIR(st.st_mode)) return Error{std::strerror(EISDIR)};
  if (!S_ISREG(st.st_mode)) return Error{"not a regular file"};
  const Error too_large{"larger than " + std::to_string(max_bytes) + " bytes"};
  if (static_cast<unsigned long long>(st.st_size) > max_bytes) return too_large;
  std::string bytes;
  if (st.st_size > 0) bytes.reserve(static_cast<size_t>(st.st_size));
  char buffer[1 << 16];
  for (;;) {
    const ssize_t n = ::read(fd, buffer, sizeof(buffer));
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return Error{std::strerror(errno)};
    if (n == 0) break;
    bytes.append(buffer, static_cast<size_t>(n));
    // The file may grow after fstat; the bound holds for what is read.
    if (bytes.size() > max_bytes) return too_large;
  }
  if (identity) *identity = {static_cast<uint64_t>(st.st_dev), static_cast<uint64_t>(st.st_ino)};
  return bytes;
}

std::optional<std::string> read_file_text(const std::string& path) {
  Result<std::string> text = read_regular_file(path, kMaxKernelFileBytes);
  if (!text.ok()) return std::nullopt;
  return std::move(text).value();
}

}  // namespace hucprof
