#include "workload/command_cgroup.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

namespace hucprof {

CommandCgroup::Made CommandCgroup::make(const std::string& root, const std::string& name) {
  Made out;
  std::unique_ptr<CommandCgroup> self(new CommandCgroup());
  self->dir_ = root + "/" + name;
  self->path_ = "/" + name;
  if (::mkdir(self->dir_.c_str(), 0755) != 0) {
    out.error = "cannot make the cgroup " + self->dir_ + ": " + std::strerror(errno);
    return out;
  }
  struct stat st {};
  if (::stat(self->dir_.c_str(), &st) != 0) {
    out.error = "cannot stat the cgroup " + self->dir_ + ": " + std::strerror(errno);
    ::rmdir(self->dir_.c_str());
    return out;
  }
  self->id_ = st.st_ino;
  const std::string procs = self->dir_ + "/cgroup.procs";
  self->procs_fd_ = ::open(procs.c_str(), O_WRONLY | O_CLOEXEC);
  if (self->procs_fd_ < 0) {
    out.error = "cannot open " + procs + ": " + std::strerror(errno);
    ::rmdir(self->dir_.c_str());
    return out;
  }
  out.cgroup = std::move(self);
  return out;
}

std::string CommandCgroup::remove() {
  if (removed_) return "";
  if (::rmdir(dir_.c_str()) != 0) {
    return "cannot remove the cgroup " + dir_ + ": " + std::strerror(errno) +
           (errno == EBUSY ? " (COMMAND left processes in it)" : "");
  }
  removed_ = true;
  return "";
}

CommandCgroup::~CommandCgroup() {
  if (procs_fd_ >= 0) ::close(procs_fd_);
  remove();
}

}  // namespace hucprof
