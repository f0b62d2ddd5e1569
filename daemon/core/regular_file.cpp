#include "core/regular_file.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

namespace hucprof {

RegularFile read_regular_file(const std::string& path, size_t max_bytes) {
  RegularFile file;
  auto failed = [&](std::string why) {
    file.bytes.clear();
    file.error = std::move(why);
    return std::move(file);
  };
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);
  if (fd < 0) return failed(std::strerror(errno));
  struct Closer {
    int fd;
    ~Closer() { ::close(fd); }
  } closer{fd};
  struct stat st {};
  if (::fstat(fd, &st) != 0) return failed(std::strerror(errno));
  if (S_ISDIR(st.st_mode)) return failed(std::strerror(EISDIR));
  if (!S_ISREG(st.st_mode)) return failed("not a regular file");
  file.identity = {static_cast<uint64_t>(st.st_dev), static_cast<uint64_t>(st.st_ino)};
  const std::string too_large = "larger than " + std::to_string(max_bytes) + " bytes";
  if (static_cast<unsigned long long>(st.st_size) > max_bytes) return failed(too_large);
  if (st.st_size > 0) file.bytes.reserve(static_cast<size_t>(st.st_size));
  char buffer[1 << 16];
  for (;;) {
    const ssize_t n = ::read(fd, buffer, sizeof(buffer));
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return failed(std::strerror(errno));
    if (n == 0) break;
    file.bytes.append(buffer, static_cast<size_t>(n));
    // The file may grow after fstat; the bound holds for what is read.
    if (file.bytes.size() > max_bytes) return failed(too_large);
  }
  return file;
}

}  // namespace hucprof
