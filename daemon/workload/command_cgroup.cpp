#include "workload/command_cgroup.h"

#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <charconv>
#include <chrono>
#include <csignal>
#include <cstring>
#include <set>
#include <sstream>
#include <thread>
#include <vector>

#include "core/base/message_text.h"
#include "core/files/file_text.h"

namespace hucprof {

namespace {

constexpr std::string_view kPrefix = "hucprof-record-";
// Rounds of moving what is in the cgroup out: a process moved takes the children it forks from
// then on with it, so only a chain of processes each forking the next and exiting can stay
// ahead of a round, and not for this long.
constexpr int kMaxRounds = 200;
// The kernel counts a cgroup empty a moment after its last task exited (or left).
constexpr std::chrono::milliseconds kSettle{10};

std::vector<pid_t> pids_in(const std::string& procs) {
  std::vector<pid_t> pids;
  std::istringstream in(read_file_text(procs).value_or(""));
  for (pid_t pid; in >> pid;) pids.push_back(pid);
  return pids;
}

// Removes the empty cgroups of recorders that no longer run (or of an earlier process with this
// one's pid): rmdir fails on a cgroup that still holds a process, which is left alone.
void remove_stale(const std::string& root) {
  DIR* dir = ::opendir(root.c_str());
  if (dir == nullptr) return;
  std::vector<std::string> stale;
  while (const dirent* entry = ::readdir(dir)) {
    const std::optional<pid_t> owner = record_cgroup_owner(entry->d_name);
    if (owner && (*owner == ::getpid() || (::kill(*owner, 0) != 0 && errno == ESRCH))) {
      stale.emplace_back(entry->d_name);
    }
  }
  ::closedir(dir);
  for (const std::string& name : stale) ::rmdir((root + "/" + name).c_str());
}

// Where the processes left in the cgroup go: this process's own cgroup, where COMMAND would have
// run without one of its own; the root if that cannot take them.
class Destination {
 public:
  explicit Destination(const std::string& root) : root_(root) {
    path_ = unified_cgroup_path(read_file_text("/proc/self/cgroup").value_or("")).value_or("/");
    open();
  }
  ~Destination() {
    if (fd_ >= 0) ::close(fd_);
  }
  Destination(const Destination&) = delete;
  Destination& operator=(const Destination&) = delete;

  // Moves `pid` there: true if moved, false if it is gone; an error if it cannot be moved.
  Result<bool> move(pid_t pid) {
    const std::string text = std::to_string(pid);
    while (true) {
      if (fd_ >= 0 && ::write(fd_, text.data(), text.size()) == static_cast<ssize_t>(text.size())) {
        return true;
      }
      if (fd_ >= 0 && errno == ESRCH) return false;
      if (path_ == "/") {
        return Error{
            "cannot move process " + text + " to " + root_ + "/cgroup.procs: " + errno_text(errno),
            kExitCannotRun};
      }
      // Our own cgroup refuses it (gone, a threaded one): the root takes any process.
      path_ = "/";
      open();
    }
  }
  const std::string& path() const { return path_; }

 private:
  void open() {
    if (fd_ >= 0) ::close(fd_);
    const std::string procs = root_ + (path_ == "/" ? "" : path_) + "/cgroup.procs";
    fd_ = ::open(procs.c_str(), O_WRONLY | O_CLOEXEC);
  }

  std::string root_, path_;
  int fd_ = -1;
};

}  // namespace

std::optional<pid_t> record_cgroup_owner(std::string_view name) {
  if (!name.starts_with(kPrefix)) return std::nullopt;
  name.remove_prefix(kPrefix.size());
  pid_t pid = 0;
  const auto [end, ec] = std::from_chars(name.data(), name.data() + name.size(), pid);
  if (ec != std::errc() || end != name.data() + name.size() || pid <= 0 || name[0] == '0') {
    return std::nullopt;
  }
  return pid;
}

std::optional<std::string> unified_cgroup_path(std::string_view proc_pid_cgroup) {
  while (!proc_pid_cgroup.empty()) {
    const size_t end = proc_pid_cgroup.find('\n');
    const std::string_view line = proc_pid_cgroup.substr(0, end);
    if (line.starts_with("0::/")) return std::string(line.substr(3));
    if (end == std::string_view::npos) break;
    proc_pid_cgroup.remove_prefix(end + 1);
  }
  return std::nullopt;
}

Result<std::unique_ptr<CommandCgroup>> CommandCgroup::make(const std::string& root) {
  remove_stale(root);
  std::unique_ptr<CommandCgroup> self(new CommandCgroup());
  const std::string name = std::string(kPrefix) + std::to_string(::getpid());
  self->root_ = root;
  self->dir_ = root + "/" + name;
  self->path_ = "/" + name;
  if (::mkdir(self->dir_.c_str(), 0755) != 0) {
    self->released_ = true;  // not ours to remove
    return Error{"cannot make the cgroup " + self->dir_ + ": " + errno_text(errno), kExitCannotRun};
  }
  // From here on the destructor removes the directory again.
  struct stat st {};
  if (::stat(self->dir_.c_str(), &st) != 0) {
    return Error{"cannot stat the cgroup " + self->dir_ + ": " + errno_text(errno), kExitCannotRun};
  }
  self->id_ = st.st_ino;
  const std::string procs = self->dir_ + "/cgroup.procs";
  self->procs_fd_ = ::open(procs.c_str(), O_WRONLY | O_CLOEXEC);
  if (self->procs_fd_ < 0) {
    return Error{"cannot open " + procs + ": " + errno_text(errno), kExitCannotRun};
  }
  return self;
}

Result<CommandCgroup::Released> CommandCgroup::release() {
  Released released;
  if (released_) return released;
  std::optional<Destination> destination;
  std::set<pid_t> moved;
  for (int round = 0; round < kMaxRounds; ++round) {
    if (::rmdir(dir_.c_str()) == 0 || errno == ENOENT) {
      released_ = true;
      released.moved = moved.size();
      if (destination) released.to = destination->path();
      return released;
    }
    if (errno != EBUSY) {
      return Error{"cannot remove the cgroup " + dir_ + ": " + errno_text(errno), kExitCannotRun};
    }
    const std::vector<pid_t> pids = pids_in(dir_ + "/cgroup.procs");
    if (pids.empty()) {
      std::this_thread::sleep_for(kSettle);
      continue;
    }
    if (!destination) destination.emplace(root_);
    for (const pid_t pid : pids) {
      const Result<bool> done = destination->move(pid);
      if (!done.ok()) return Error{"cannot empty the cgroup " + dir_ + ": " + done.error().text};
      if (done.value()) moved.insert(pid);
    }
  }
  return Error{"cannot empty the cgroup " + dir_ + ": its processes keep starting new ones (" +
                   std::to_string(moved.size()) + " moved out)",
               kExitCannotRun};
}

CommandCgroup::~CommandCgroup() {
  if (procs_fd_ >= 0) ::close(procs_fd_);
  [[maybe_unused]] Result<Released> ignored = release();
}

}  // namespace hucprof
