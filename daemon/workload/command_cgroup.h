#pragma once
#include <cstdint>
#include <memory>
#include <string>

#include "core/result.h"

namespace hucprof {

// A cgroup of hucprof's own on the unified hierarchy for `record --only-command`'s COMMAND: made
// before COMMAND starts (so COMMAND is in it from its first instruction), removed when done.
// Its id is what bpf_get_current_cgroup_id() returns for the tasks in it: the directory's inode
// number (docs/design.md, "Which workload").
class CommandCgroup {
 public:
  // `root`: the unified root (find_unified_root); `name`: the directory made below it.
  static Result<std::unique_ptr<CommandCgroup>> make(const std::string& root,
                                                     const std::string& name);
  ~CommandCgroup();  // removes the directory, if remove() was not called
  // Removes the directory now, or says why not (COMMAND left processes in it).
  Result<void> remove();
  CommandCgroup(const CommandCgroup&) = delete;
  CommandCgroup& operator=(const CommandCgroup&) = delete;

  uint64_t id() const { return id_; }
  const std::string& path() const { return path_; }  // below the root, as workloads name it
  // cgroup.procs, open for writing: a process that writes "0" to it moves into the cgroup.
  int procs_fd() const { return procs_fd_; }

 private:
  CommandCgroup() = default;
  std::string dir_, path_;
  uint64_t id_ = 0;
  int procs_fd_ = -1;
  bool removed_ = false;
};

}  // namespace hucprof
