#pragma once
#include <vector>

#include "core/base/result.h"
#include "core/base/unique_fd.h"

namespace hucprof {

// How ProcessExits watches.
enum class ExitWatch {
  Pidfd,  // a pidfd per process (kill(pid, 0) where the kernel has no pidfd_open)
  Kill,   // kill(pid, 0) only: the fallback, chosen directly by its tests
};

// Watches `record -p`'s processes for their exit (core/drain/followed_exits.h decides what it
// means). A pidfd (pidfd_open(2), Linux 5.3) is the process itself, not its number: once it exits,
// a new process given the same id is not mistaken for it, however late the next look is.
class ProcessExits {
 public:
  // Each of `pids` watched from now; one that is gone already is an error naming it (exit 2),
  // a pidfd the kernel refuses another (exit 1).
  static Result<ProcessExits> watch(const std::vector<int>& pids, ExitWatch how = ExitWatch::Pidfd);

  // The watched processes that have exited so far (a zombie its parent has not reaped yet
  // included, where pidfds watch), without waiting. Once exited, always in it.
  std::vector<int> exited();

 private:
  struct Watched {
    int pid = 0;
    UniqueFd pidfd;  // none: kill(pid, 0)
    bool exited = false;
  };
  std::vector<Watched> watched_;
};

}  // namespace hucprof
