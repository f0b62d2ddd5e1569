#include "app/stop_signal.h"

#include <poll.h>
#include <sys/signalfd.h>
#include <unistd.h>

#include <csignal>

namespace hucprof {

StopSignal::StopSignal() {
  sigset_t mask;
  sigemptyset(&mask);
  sigaddset(&mask, SIGINT);
  sigaddset(&mask, SIGTERM);
  // Threads started later (the HTTP server's) inherit the mask, so the signal comes here.
  pthread_sigmask(SIG_BLOCK, &mask, nullptr);
  fd_ = UniqueFd(signalfd(-1, &mask, SFD_CLOEXEC));
}

bool StopSignal::wait_for(std::chrono::milliseconds timeout) {
  pollfd pfd{fd_.get(), POLLIN, 0};
  int n = poll(&pfd, 1, static_cast<int>(timeout.count()));
  if (n <= 0) return false;
  signalfd_siginfo info{};
  if (read(fd_.get(), &info, sizeof(info)) != sizeof(info)) return false;
  last_signal_ = static_cast<int>(info.ssi_signo);
  return true;
}

}  // namespace hucprof
