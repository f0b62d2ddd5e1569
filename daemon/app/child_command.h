#pragma once
#include <sys/types.h>

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "core/base/result.h"

namespace hucprof {

// The COMMAND of `hucprof record -- COMMAND ARGS...`: started with the signal mask and
// dispositions a fresh process expects (the recorder blocks signals for its signalfd and ignores
// SIGPIPE), reaped by its owner.
class ChildCommand {
 public:
  // Whether argv[0] names an executable file (searched in PATH unless it holds a "/", as
  // posix_spawnp searches), and if not why, in the words start() would use: checked before
  // anything is attached, so a typo in COMMAND costs nothing.
  static Result<void> check_runnable(const std::vector<std::string>& argv);

  // The running child, or why it cannot start (not found, not executable, in words).
  // cgroup_procs_fd: a cgroup's cgroup.procs, open for writing: the command is in that cgroup
  // before its first instruction (workload/command_cgroup.h); -1 leaves it in hucprof's.
  static Result<std::unique_ptr<ChildCommand>> start(const std::vector<std::string>& argv,
                                                     int cgroup_procs_fd = -1);

  ChildCommand(const ChildCommand&) = delete;
  ChildCommand& operator=(const ChildCommand&) = delete;
  ~ChildCommand();  // a child still running is left alone but reaped if it already exited

  // Exit status once it exited (shell style: 128 + signal for a killed child), else nullopt.
  std::optional<int> poll();
  int wait();  // blocks until it exits
  void signal(int signo);

 private:
  explicit ChildCommand(pid_t pid) : pid_(pid) {}
  pid_t pid_ = -1;
  std::optional<int> status_;
};

}  // namespace hucprof
