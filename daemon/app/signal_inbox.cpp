#include "app/signal_inbox.h"

#include <poll.h>
#include <sys/signalfd.h>
#include <unistd.h>

#include <array>
#include <csignal>

namespace hucprof {
namespace {

struct Handled {
  int number;
  std::string_view name;
  SignalAction action;
};

// SIGABRT stays default on purpose: systemd's watchdog sends it to get a core dump of a hung
// daemon.
constexpr std::array<Handled, 6> kHandled{{
    {SIGTERM, "SIGTERM", SignalAction::Stop},
    {SIGINT, "SIGINT", SignalAction::Stop},
    {SIGHUP, "SIGHUP", SignalAction::Reload},
    {SIGQUIT, "SIGQUIT", SignalAction::Ignore},
    {SIGUSR1, "SIGUSR1", SignalAction::Ignore},
    {SIGUSR2, "SIGUSR2", SignalAction::Ignore},
}};

sigset_t handled_set() {
  sigset_t mask;
  sigemptyset(&mask);
  for (const Handled& h : kHandled) sigaddset(&mask, h.number);
  return mask;
}

}  // namespace

void hold_daemon_signals(bool hold) {
  const sigset_t mask = handled_set();
  pthread_sigmask(hold ? SIG_BLOCK : SIG_UNBLOCK, &mask, nullptr);
}

SignalInbox::SignalInbox() {
  const sigset_t mask = handled_set();
  pthread_sigmask(SIG_BLOCK, &mask, nullptr);
  std::signal(SIGPIPE, SIG_IGN);
  // Signals that arrived since main() held them are pending: the first read returns them.
  fd_ = UniqueFd(signalfd(-1, &mask, SFD_CLOEXEC));
}

std::optional<ReceivedSignal> SignalInbox::wait_for(std::chrono::milliseconds timeout) {
  pollfd pfd{fd_.get(), POLLIN, 0};
  if (poll(&pfd, 1, static_cast<int>(timeout.count())) <= 0) return std::nullopt;
  signalfd_siginfo info{};
  if (read(fd_.get(), &info, sizeof(info)) != sizeof(info)) return std::nullopt;
  for (const Handled& h : kHandled) {
    if (static_cast<uint32_t>(h.number) == info.ssi_signo) {
      return ReceivedSignal{h.number, h.action, h.name};
    }
  }
  return std::nullopt;
}

}  // namespace hucprof
