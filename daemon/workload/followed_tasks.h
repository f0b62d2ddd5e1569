#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "core/base/result.h"
#include "core/workload/record_target.h"

namespace hucprof {

// What `record -p` and `record -G` name, checked on this machine (core/workload/record_target.h
// decided the flags; this looks at /proc and the cgroup tree).

// Each PID a running process (not a thread of one: -p takes process ids, as its tasks are
// followed by their process id), else the one line naming the first that is not (exit 2).
Result<std::vector<int>> check_processes(const std::vector<int>& pids,
                                         const std::string& proc = "/proc");

struct ResolvedCgroup {
  std::string path;  // below the unified root: "/system.slice/nginx.service"
  uint64_t id = 0;   // bpf_get_current_cgroup_id()'s: the directory's inode number
};
// -G's cgroup below `root` (find_unified_root): its path as given, or the one directory of the
// unit's name in the tree (systemd's layout nests a unit under its slices). Missing, or a unit
// name found twice, is an error naming it (exit 2).
Result<ResolvedCgroup> resolve_cgroup(const std::string& root, const CgroupName& name);

}  // namespace hucprof
