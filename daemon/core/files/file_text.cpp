#include "core/files/file_text.h"

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

constexpr int kReadFlags = O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY;

Error errno_error(int error) { return Error{std::strerror(error)}; }

Error too_large(uint64_t max_bytes) {
  return Error{"larger than " + std::to_string(max_bytes) + " bytes"};
}

FileIdentity identity_of(const struct stat& st) {
  return {static_cast<uint64_t>(st.st_dev), static_cast<uint64_t>(st.st_ino)};
}

}  // namespace

Result<RegularFile> open_regular_file(const std::string& path, uint64_t max_bytes) {
  // O_PATH resolves the name (links followed, a loop is ELOOP) and opens nothing: no FIFO waits
  // for a writer, no device's open() runs.
  const UniqueFd located(::open(path.c_str(), O_PATH | O_CLOEXEC));
  if (!located) return errno_error(errno);
  struct stat st {};
  if (::fstat(located.get(), &st) != 0) return errno_error(errno);
  if (S_ISDIR(st.st_mode)) return errno_error(EISDIR);
  if (!S_ISREG(st.st_mode)) return Error{"not a regular file"};
  if (static_cast<uint64_t>(st.st_size) > max_bytes) return too_large(max_bytes);
  // Opened through the located descriptor: the name may point elsewhere by now.
  UniqueFd fd(::open(("/proc/self/fd/" + std::to_string(located.get())).c_str(), kReadFlags));
  if (!fd && errno == ENOENT) {
    // No /proc (a bare container running `report`): by name, kept only if it is the same file.
    fd = UniqueFd(::open(path.c_str(), kReadFlags));
    struct stat again {};
    if (fd && (::fstat(fd.get(), &again) != 0 || identity_of(again) != identity_of(st))) {
      return Error{"replaced while it was opened"};
    }
  }
  if (!fd) return errno_error(errno);
  return RegularFile{std::move(fd), static_cast<uint64_t>(st.st_size), identity_of(st)};
}

Result<std::string> read_regular_file(const std::string& path, size_t max_bytes,
                                      FileIdentity* identity) {
  Result<RegularFile> opened = open_regular_file(path, max_bytes);
  if (!opened.ok()) return opened.error();
  const RegularFile& file = opened.value();
  std::string bytes;
  bytes.reserve(static_cast<size_t>(file.size));
  char buffer[1 << 16];
  for (;;) {
    const ssize_t n = ::read(file.fd.get(), buffer, sizeof(buffer));
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return errno_error(errno);
    if (n == 0) break;
    bytes.append(buffer, static_cast<size_t>(n));
    // The file may grow after it was opened (procfs reports no size): the bound holds for what
    // is read.
    if (bytes.size() > max_bytes) return too_large(max_bytes);
  }
  if (identity) *identity = file.identity;
  return bytes;
}

std::optional<std::string> read_file_text(const std::string& path) {
  Result<std::string> text = read_regular_file(path, kMaxKernelFileBytes);
  if (!text.ok()) return std::nullopt;
  return std::move(text).value();
}

FileStreamBuf::FileStreamBuf(RegularFile file, uint64_t max_bytes)
    : file_(std::move(file)), left_(max_bytes) {}

FileStreamBuf::int_type FileStreamBuf::underflow() {
  if (gptr() < egptr()) return traits_type::to_int_type(*gptr());
  if (exceeded_ || error_) return traits_type::eof();
  for (;;) {
    // One byte more than is left: reading it is how the bound is found crossed.
    const size_t want = left_ < sizeof(buffer_) ? static_cast<size_t>(left_) + 1 : sizeof(buffer_);
    const ssize_t n = ::read(file_.fd.get(), buffer_, want);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      error_ = errno;
      return traits_type::eof();
    }
    if (n == 0) return traits_type::eof();
    size_t take = static_cast<size_t>(n);
    if (take > left_) {  // what is past the bound is never handed out
      exceeded_ = true;
      take = static_cast<size_t>(left_);
    }
    left_ -= take;
    if (take == 0) return traits_type::eof();
    setg(buffer_, buffer_, buffer_ + take);
    return traits_type::to_int_type(*gptr());
  }
}

}  // namespace hucprof
