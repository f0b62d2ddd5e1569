#pragma once
#include <cstddef>
#include <cstdint>
#include <set>
#include <string>
#include <string_view>

namespace hucprof {

// The comm label of check samples whose command the profile no longer names one by one.
inline constexpr std::string_view kFoldedComm = "[other comms]";
// The comm label of a task whose comm is empty (the kernel's bytes start with a NUL).
inline constexpr std::string_view kNoComm = "[no comm]";

// The task labels of check samples (`comm`, and `pid` in recordings), bounded however long the
// daemon runs: a node runs commands without end (a CI job's scripts, kworker/u16:3, ...), and
// each comm multiplies the profile's entries. The first kNamedComms comms are named; the rest
// are folded into kFoldedComm with their samples, so sums stay exact. Likewise the first
// kNamedPids processes carry a pid label and the rest none (pid 0). Pure: the sampler's key in,
// labels out.
class TaskLabels {
 public:
  static constexpr size_t kNamedComms = 256;
  static constexpr size_t kNamedPids = 1024;

  // The label of the kernel's comm bytes (up to `size`, NUL-terminated or not), as comm_text.
  std::string_view comm(const char* bytes, size_t size);
  // The pid label of a process (0: none, for tgid 0 or past kNamedPids).
  int64_t pid(uint32_t tgid);

  size_t named_comms() const { return comms_.size(); }
  size_t named_pids() const { return pids_.size(); }

 private:
  std::set<std::string, std::less<>> comms_;
  std::set<uint32_t> pids_;
};

// The comm bytes as a label, before any bounding (TaskLabels::comm says how): printable_name of
// them (a comm is any bytes prctl(PR_SET_NAME) was given; control bytes and bytes that are not
// UTF-8 are written \xNN, as every name hucprof shows), an empty comm kNoComm. printable_name
// leaves its own output as it is, so the pprof writer's pass over its strings changes nothing.
std::string comm_text(const char* bytes, size_t size);

}  // namespace hucprof
