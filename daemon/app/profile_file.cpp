#include "app/profile_file.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <vector>

#include "bpf/libbpf_ptr.h"

namespace hucprof {

namespace {

std::string errno_words(int err) { return std::strerror(err); }

// The directory part of a path, "." for a bare file name.
std::string directory_of(const std::string& path) {
  const size_t slash = path.rfind('/');
  if (slash == std::string::npos) return ".";
  return slash == 0 ? "/" : path.substr(0, slash);
}

bool write_all(int fd, const std::string& bytes) {
  size_t done = 0;
  while (done < bytes.size()) {
    const ssize_t n = ::write(fd, bytes.data() + done, bytes.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    done += static_cast<size_t>(n);
  }
  return true;
}

}  // namespace

FileBytes read_file_bytes(const std::string& path, size_t max_bytes) {
  UniqueFd fd(::open(path.c_str(), O_RDONLY | O_CLOEXEC));
  if (!fd) return {"", errno_words(errno)};
  struct stat st {};
  if (::fstat(fd.get(), &st) != 0) return {"", errno_words(errno)};
  if (!S_ISREG(st.st_mode)) return {"", "not a regular file"};
  if (static_cast<uint64_t>(st.st_size) > max_bytes) {
    return {"", "larger than " + std::to_string(max_bytes >> 20) + " MiB"};
  }
  std::string bytes;
  std::vector<char> buf(1 << 16);
  for (;;) {
    const ssize_t n = ::read(fd.get(), buf.data(), buf.size());
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return {"", errno_words(errno)};
    if (n == 0) break;
    bytes.append(buf.data(), static_cast<size_t>(n));
    if (bytes.size() > max_bytes) {
      return {"", "larger than " + std::to_string(max_bytes >> 20) + " MiB"};
    }
  }
  return {std::move(bytes), ""};
}

std::string check_writable(const std::string& path) {
  const std::string dir = directory_of(path);
  struct stat st {};
  if (::stat(dir.c_str(), &st) != 0) return dir + ": " + errno_words(errno);
  if (!S_ISDIR(st.st_mode)) return dir + ": not a directory";
  if (::access(dir.c_str(), W_OK) != 0) return dir + ": " + errno_words(errno);
  if (::stat(path.c_str(), &st) == 0 && S_ISDIR(st.st_mode)) return path + ": is a directory";
  return "";
}

std::string write_file_atomically(const std::string& path, const std::string& bytes) {
  std::string temp = path + ".XXXXXX";
  UniqueFd fd(::mkostemp(temp.data(), O_CLOEXEC));
  if (!fd) return "cannot create a file next to " + path + ": " + errno_words(errno);
  // mkstemp makes it 0600, as perf makes perf.data: recorded as root, read by its owner.
  if (!write_all(fd.get(), bytes) || ::fsync(fd.get()) != 0) {
    const int err = errno;
    ::unlink(temp.c_str());
    return "cannot write " + temp + ": " + errno_words(err);
  }
  fd = UniqueFd();
  if (::rename(temp.c_str(), path.c_str()) != 0) {
    const int err = errno;
    ::unlink(temp.c_str());
    return "cannot rename " + temp + " to " + path + ": " + errno_words(err);
  }
  return "";
}

}  // namespace hucprof
