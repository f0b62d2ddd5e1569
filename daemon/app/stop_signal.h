#pragma once
#include <chrono>

#include "bpf/libbpf_ptr.h"

namespace hucprof {

// Blocks SIGINT/SIGTERM for the process and waits for them through a signalfd, so the main
// loop sleeps until the next drain *or* a stop request, without async-signal-unsafe handlers.
class StopSignal {
 public:
  StopSignal();
  // True when a stop signal arrived within `timeout`.
  bool wait_for(std::chrono::milliseconds timeout);
  int last_signal() const { return last_signal_; }

 private:
  UniqueFd fd_;
  int last_signal_ = 0;
};

}  // namespace hucprof
