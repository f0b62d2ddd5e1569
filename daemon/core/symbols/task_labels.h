#pragma once
#include <array>
#include <cstddef>
#include <cstdint>
#include <set>
#include <string>
#include <string_view>
#include <unordered_map>

namespace hucprof {

// The comm label of check samples whose command the profile no longer names one by one.
inline constexpr std::string_view kFoldedComm = "[other comms]";
// The comm label of a task whose comm is empty (the kernel's bytes start with a NUL).
inline constexpr std::string_view kNoComm = "[no comm]";

// The task labels of check samples (`comm`, and `pid` in recordings), bounded however long the
// daemon runs: a node runs commands without end (a CI job's scripts, io_uring's iou-wrk-NNN,
// ...), and each comm multiplies the label sets. At most kNamedComms comms are named at once;
// past that a new one is folded into kFoldedComm with its samples, so sums stay exact. A comm
// no label set uses any more (forget_comms_except) frees its name: the drains' comms come and
// go, and the profile store names those it keeps (ProfileStore, which folds the quiet ones).
// The first kNamedPids processes carry a pid label and the rest none (pid 0): a recording is
// short, a daemon's keys carry no tgid. Pure: the sampler's key in, labels out.
class TaskLabels {
 public:
  static constexpr size_t kNamedComms = 256;
  static constexpr size_t kNamedPids = 1024;
  static constexpr size_t kCommBytes = 16;  // TASK_COMM_LEN: huc_sample_key::comm

  // The label of the kernel's comm bytes (NUL-terminated or not), as comm_text. Found by the
  // bytes themselves where it was asked before: this runs for every sample key of every drain.
  std::string_view comm(const char (&bytes)[kCommBytes]);
  // Forgets the comms not in `in_use` (the comms of the label sets still held): their names are
  // free for new ones.
  void forget_comms_except(const std::set<std::string_view, std::less<>>& in_use);
  // The pid label of a process (0: none, for tgid 0 or past kNamedPids).
  int64_t pid(uint32_t tgid);

  size_t named_comms() const { return comms_.size(); }
  size_t named_pids() const { return pids_.size(); }

 private:
  using CommBytes = std::array<char, kCommBytes>;  // up to the NUL, zeros after it
  struct CommBytesHash {
    size_t operator()(const CommBytes& bytes) const;
  };
  // The labels asked for by bytes: most only a few ever (bounded: a burst of folded comms
  // starts it anew, kMaxCachedComms).
  static constexpr size_t kMaxCachedComms = 4 * kNamedComms;

  std::string_view name(std::string text);

  std::set<std::string, std::less<>> comms_;
  std::unordered_map<CommBytes, std::string_view, CommBytesHash> by_bytes_;
  std::set<uint32_t> pids_;
};

// The comm bytes as a label, before any bounding (TaskLabels::comm says how): printable_name of
// them (a comm is any bytes prctl(PR_SET_NAME) was given; control bytes and bytes that are not
// UTF-8 are written \xNN, as every name hucprof shows), an empty comm kNoComm. printable_name
// leaves its own output as it is, so the pprof writer's pass over its strings changes nothing.
std::string comm_text(const char* bytes, size_t size);

}  // namespace hucprof
