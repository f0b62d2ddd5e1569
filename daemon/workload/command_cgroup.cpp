#include "workload/command_cgroup.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

namespace hucprof {

Result<std::unique_ptr<CommandCgroup>> CommandCgroup::make(const std::string& root,
                                                           const std::string& name) {
  std::unique_ptr<CommandCgroup> self(new CommandCgroup());
  self->dir_ = root + "/" + name;
  self->path_ = "/" + name;
  if (::mkdir(self->dir_.c_str(), 0755) != 0) {
    return Error{"cannot make the cgroup " + self->dir_ + ": " + std::strerror(errno),
                 kExitCannotRun};
  }
  // From here on the destructor removes the directory again.
  struct stat st {};
  if (::stat(self->dir_.c_str(), &st) != 0) {
    return Error{"cannot stat the cgroup " + self->dir_ + ": " + std::strerror(errno),
                 kExitCannotRun};
  }
  self->id_ = st.st_ino;
  const std::string procs = self->dir_ + "/cgroup.procs";
  self->procs_fd_ = ::open(procs.c_str(), O_WRONLY | O_CLOEXEC);
  if (self->procs_fd_ < 0) {
    return Error{"cannot open " + procs + ": " + std::strerror(errno), kExitCannotRun};
  }
  return self;
}

Result<void> CommandCgroup::remove() {
  if (removed_) return {};
  if (::rmdir(dir_.c_str()) != 0) {
    const int err = errno;
    return Error{"cannot remove the cgroup " + dir_ + ": " + std::strerror(err) +
                 (err == EBUSY ? " (COMMAND left processes in it)" : "")};
  }
  removed_ = true;
  return {};
}

CommandCgroup::~CommandCgroup() {
  if (procs_fd_ >= 0) ::close(procs_fd_);
  [[maybe_unused]] Result<void> ignored = remove();
}

}  // namespace hucprof
