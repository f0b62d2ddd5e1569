#include "workload/process_exits.h"

#include <poll.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>
#include <csignal>
#include <cstring>
#include <string>

#ifndef SYS_pidfd_open
#define SYS_pidfd_open 434  // the same number on every architecture (asm-generic/unistd.h)
#endif

namespace hucprof {

namespace {

// A pidfd polls readable once the whole process has exited, not when only its first thread has
// (-p follows every thread).
bool pidfd_exited(int pidfd) {
  pollfd p{.fd = pidfd, .events = POLLIN, .revents = 0};
  return poll(&p, 1, 0) == 1 && (p.revents & (POLLIN | POLLHUP)) != 0;
}

// EPERM (another user's process, for a recorder without CAP_KILL) still means it is there.
bool kill_finds(int pid) { return kill(pid, 0) == 0 || errno != ESRCH; }

Error gone(int pid) {
  return Error{"-p " + std::to_string(pid) + ": no process runs with that id"};
}

}  // namespace

Result<ProcessExits> ProcessExits::watch(const std::vector<int>& pids, ExitWatch how) {
  ProcessExits out;
  for (int pid : pids) {
    Watched w;
    w.pid = pid;
    if (how == ExitWatch::Pidfd) {
      const long fd = syscall(SYS_pidfd_open, pid, 0);
      const int err = errno;
      if (fd >= 0) {
        w.pidfd = UniqueFd(static_cast<int>(fd));
      } else if (err == ESRCH) {
        return gone(pid);
      } else if (err == ENOSYS) {
        // Every kernel hucprof supports (5.6+) has pidfd_open, but a container's seccomp filter
        // may answer ENOSYS for a syscall its profile does not know. kill(pid, 0) still sees the
        // exit, only not race-free: a pid reused between two looks would keep the recording on
        // (until --duration), and a zombie counts as running until its parent reaps it.
        how = ExitWatch::Kill;
      } else {
        return Error{"-p " + std::to_string(pid) +
                         ": cannot watch it for its exit (pidfd_open: " + std::strerror(err) + ")",
                     kExitCannotRun};
      }
    }
    if (!w.pidfd && !kill_finds(pid)) return gone(pid);
    out.watched_.push_back(std::move(w));
  }
  return out;
}

std::vector<int> ProcessExits::exited() {
  std::vector<int> out;
  for (Watched& w : watched_) {
    if (!w.exited) w.exited = w.pidfd ? pidfd_exited(w.pidfd.get()) : !kill_finds(w.pid);
    if (w.exited) out.push_back(w.pid);
  }
  return out;
}

}  // namespace hucprof
