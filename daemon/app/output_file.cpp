#include "app/output_file.h"

#include <fcntl.h>
#include <stdio.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <utility>

namespace hucprof {

namespace {

using Kind = OutputFacts::Kind;
using Action = OutputDecision::Action;

std::string errno_words(int err) { return std::strerror(err); }

// The directory a path's temporary file goes in, "." for a bare file name.
std::string directory_of(const std::string& path) {
  const size_t slash = path.rfind('/');
  if (slash == std::string::npos) return ".";
  return slash == 0 ? "/" : path.substr(0, slash);
}

Kind kind_of(mode_t mode) {
  if (S_ISREG(mode)) return Kind::Regular;
  if (S_ISDIR(mode)) return Kind::Directory;
  if (S_ISFIFO(mode)) return Kind::Fifo;
  if (S_ISSOCK(mode)) return Kind::Socket;
  if (S_ISCHR(mode)) return Kind::CharDevice;
  if (S_ISBLK(mode)) return Kind::BlockDevice;
  return Kind::Socket;  // nothing else exists on Linux; refused like a socket
}

bool write_all(int fd, std::string_view bytes) {
  while (!bytes.empty()) {
    const ssize_t n = ::write(fd, bytes.data(), bytes.size());
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    bytes.remove_prefix(static_cast<size_t>(n));
  }
  return true;
}

// Puts the finished temporary file at `path` only if nothing is there: what appeared while
// recording is not ours to replace. link() is the fallback where renameat2 is not supported.
int rename_without_replacing(const std::string& temp, const std::string& path) {
  if (::renameat2(AT_FDCWD, temp.c_str(), AT_FDCWD, path.c_str(), RENAME_NOREPLACE) == 0) return 0;
  if (errno != EINVAL && errno != ENOSYS) return -1;
  if (::link(temp.c_str(), path.c_str()) != 0) return -1;
  ::unlink(temp.c_str());
  return 0;
}

}  // namespace

Result<OutputFile> OutputFile::open(const std::string& path, OutputContent content,
                                    std::optional<FileIdentity> input) {
  OutputFacts facts;
  struct stat entry {};
  if (::lstat(path.c_str(), &entry) == 0) {
    facts.symlink = S_ISLNK(entry.st_mode);
    facts.entry = facts.symlink ? Kind::Missing : kind_of(entry.st_mode);
  } else if (errno != ENOENT) {
    return Error{errno_words(errno)};
  }
  // What the path leads to, held by an O_PATH descriptor: looking opens no device, and the
  // file written into below is this one even if the name changes meanwhile.
  UniqueFd target;
  struct stat st {};
  if (facts.symlink || facts.entry != Kind::Missing) {
    target = UniqueFd(::open(path.c_str(), O_PATH | O_CLOEXEC));
    if (!target && errno != ENOENT) return Error{errno_words(errno)};
    if (target) {
      if (::fstat(target.get(), &st) != 0) return Error{errno_words(errno)};
      facts.target = kind_of(st.st_mode);
      facts.device_major = major(st.st_rdev);
      facts.device_minor = minor(st.st_rdev);
    }
  }
  const OutputDecision decision = decide_output(facts, content);
  if (decision.action == Action::Refuse) return Error{decision.why};
  if (target && input &&
      FileIdentity{static_cast<uint64_t>(st.st_dev), static_cast<uint64_t>(st.st_ino)} == *input) {
    return Error{"is the file being read; writing it would destroy the input"};
  }

  OutputFile out;
  out.path_ = path;
  out.action_ = decision.action;
  if (decision.action == Action::WriteInto) {
    // Reopened through /proc, so it is the very inode looked at above.
    const std::string self = "/proc/self/fd/" + std::to_string(target.get());
    out.fd_ = UniqueFd(::open(self.c_str(), O_WRONLY | O_NOCTTY | O_NONBLOCK | O_CLOEXEC));
    if (!out.fd_) {
      if (errno == ENXIO && facts.target == Kind::Fifo) {
        return Error{"is a FIFO with no reader (start the reader first)"};
      }
      return Error{errno_words(errno)};
    }
    // Writes may wait for a pipe's reader; only the open must not.
    ::fcntl(out.fd_.get(), F_SETFL, ::fcntl(out.fd_.get(), F_GETFL) & ~O_NONBLOCK);
    out.regular_ = facts.target == Kind::Regular;
    return out;
  }
  // Creating the temporary file is the test that the directory takes a file: permission
  // bits, read-only mounts and /proc all answer it truthfully.
  out.temp_ = path + ".XXXXXX";
  out.fd_ = UniqueFd(::mkostemp(out.temp_.data(), O_CLOEXEC));
  if (!out.fd_) {
    const int err = errno;
    out.temp_.clear();
    return Error{"cannot create a file in " + directory_of(path) + ": " + errno_words(err)};
  }
  return out;
}

OutputFile& OutputFile::operator=(OutputFile&& other) noexcept {
  if (this != &other) {
    if (!temp_.empty()) ::unlink(temp_.c_str());
    path_ = std::move(other.path_);
    temp_ = std::exchange(other.temp_, std::string());  // the moved-from one removes nothing
    fd_ = std::move(other.fd_);
    action_ = other.action_;
    regular_ = other.regular_;
  }
  return *this;
}

OutputFile::~OutputFile() {
  if (!temp_.empty()) ::unlink(temp_.c_str());
}

Result<void> OutputFile::commit(std::string_view bytes) {
  if (!fd_) return Error{"already written", kExitCannotRun};
  if (action_ == Action::WriteInto) {
    if (regular_ && (::ftruncate(fd_.get(), 0) != 0 || ::lseek(fd_.get(), 0, SEEK_SET) != 0)) {
      return Error{"cannot truncate " + path_ + ": " + errno_words(errno), kExitCannotRun};
    }
    const bool written = write_all(fd_.get(), bytes) && (!regular_ || ::fsync(fd_.get()) == 0);
    const int err = errno;
    fd_.reset();
    if (!written) return Error{"cannot write " + path_ + ": " + errno_words(err), kExitCannotRun};
    return {};
  }
  // mkstemp made it 0600, as perf makes perf.data: recorded as root, read by its owner.
  if (!write_all(fd_.get(), bytes) || ::fsync(fd_.get()) != 0) {
    const int err = errno;
    fd_.reset();
    return Error{"cannot write " + temp_ + ": " + errno_words(err), kExitCannotRun};
  }
  fd_.reset();
  const int placed = action_ == Action::Create ? rename_without_replacing(temp_, path_)
                                               : ::rename(temp_.c_str(), path_.c_str());
  if (placed != 0) {
    const int err = errno;
    if (err == EEXIST) {
      // Something was put at the path while we worked: the profile stays where it is.
      std::string kept = std::move(temp_);
      temp_.clear();
      return Error{path_ + " appeared meanwhile and is left alone; the profile is in " + kept,
                   kExitCannotRun};
    }
    return Error{"cannot rename " + temp_ + " to " + path_ + ": " + errno_words(err),
                 kExitCannotRun};
  }
  temp_.clear();
  return {};
}

}  // namespace hucprof
