#pragma once
#include <sys/types.h>

#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include "core/base/result.h"

namespace hucprof {

// A cgroup of hucprof's own on the unified hierarchy for `record -- COMMAND`, named
// hucprof-record-PID after the recorder: made before COMMAND starts (so COMMAND is in it from its
// first instruction), removed when done. Its id is what bpf_get_current_cgroup_id() returns for
// the tasks in it: the directory's inode number (docs/design.md, "Which workload").
//
// Nothing of the user's is harmed to remove it: what COMMAND left running (a daemon it started, a
// `sleep &`) is moved back to the recorder's own cgroup, where it would have run without
// following COMMAND, not killed or stopped. `perf record -- COMMAND` likewise stops at COMMAND's
// exit and leaves what it started running.
class CommandCgroup {
 public:
  // `root`: the unified root (find_unified_root). Also removes the empty cgroups that recorders
  // no longer running left (killed before they could remove theirs).
  static Result<std::unique_ptr<CommandCgroup>> make(const std::string& root);
  ~CommandCgroup();  // release(), if it was not called
  CommandCgroup(const CommandCgroup&) = delete;
  CommandCgroup& operator=(const CommandCgroup&) = delete;

  struct Released {
    size_t moved = 0;  // processes still in the cgroup, moved out
    std::string to;    // the cgroup they were moved to, below the root
  };
  // Moves every process still in the cgroup to the recorder's own cgroup and removes the
  // directory, or says why it could not (the directory then stays; the next recorder removes it
  // once it is empty).
  Result<Released> release();

  uint64_t id() const { return id_; }
  const std::string& path() const { return path_; }  // below the root, as workloads name it
  // cgroup.procs, open for writing: a process that writes "0" to it moves into the cgroup.
  int procs_fd() const { return procs_fd_; }

 private:
  CommandCgroup() = default;
  std::string root_, dir_, path_;
  uint64_t id_ = 0;
  int procs_fd_ = -1;
  bool released_ = false;
};

// The recorder a directory name hucprof-record-PID belongs to, if it is one.
std::optional<pid_t> record_cgroup_owner(std::string_view name);
// The unified hierarchy's line of a /proc/PID/cgroup text ("0::/user.slice/x.scope"): the path.
std::optional<std::string> unified_cgroup_path(std::string_view proc_pid_cgroup);

}  // namespace hucprof
