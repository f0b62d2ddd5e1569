#pragma once
#include <chrono>
#include <optional>
#include <string_view>

#include "kernel_edge/libbpf_ptr.h"

namespace hucprof {

// What the daemon does with a signal a person or systemd may send.
enum class SignalAction {
  Stop,    // SIGTERM, SIGINT: detach everything, exit 0
  Reload,  // SIGHUP: re-read the settings (systemctl reload)
  Ignore,  // SIGQUIT, SIGUSR1, SIGUSR2: logged and otherwise ignored
};

struct ReceivedSignal {
  int number = 0;
  SignalAction action = SignalAction::Ignore;
  std::string_view name;  // "SIGHUP"
};

// Blocks the signals above for the whole process and reads them from a signalfd, so the main
// loop sleeps until the next drain *or* a signal, without async-signal-unsafe handlers, and no
// signal that would kill a daemon by default does so silently. SIGPIPE is ignored: a write to a
// closed socket or stderr pipe fails with EPIPE where it happens instead of killing the process.
// Construct before any thread starts: threads inherit the mask, so every signal comes here.
class SignalInbox {
 public:
  SignalInbox();
  // The next signal, if one arrives within `timeout`.
  std::optional<ReceivedSignal> wait_for(std::chrono::milliseconds timeout);

 private:
  UniqueFd fd_;
};

// Blocks the signals SignalInbox reads (or, with false, restores them). main() blocks them before
// anything else, so a SIGTERM that arrives while the flags and config are still being read
// waits for the inbox (and is logged and answered by a clean stop) instead of killing the
// daemon silently; commands without an inbox unblock them again.
void hold_daemon_signals(bool hold);

}  // namespace hucprof
