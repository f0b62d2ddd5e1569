#pragma once
#include <optional>
#include <string>
#include <vector>

namespace hucprof {

// The processes `record -p` follows and which of them are gone: as `perf record -p` does, the
// recording ends once none is left (daemon/workload/process_exits.h watches them; this decides).
class FollowedExits {
 public:
  // -p's processes; none (no -p) never ends a recording.
  explicit FollowedExits(std::vector<int> pids);

  // Takes what a look at the processes found exited (the same ones again, or ids not followed,
  // change nothing) and returns the line to log about the newly exited, if any:
  // "PID 12 exited: stopping the recording" once none is left, else
  // "PID 12 exited; still recording PID 30".
  std::optional<std::string> note(const std::vector<int>& exited);

  // Every followed process has exited: the recording ends.
  bool none_left() const { return followed_ && running_.empty(); }

  // For the line that says how long the recording lasts: "until PID 12 exits", "until PIDs
  // 12,30 have exited".
  std::string until_words() const;

 private:
  bool followed_;
  std::vector<int> running_;  // sorted
};

}  // namespace hucprof
