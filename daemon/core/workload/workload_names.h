#pragma once
#include <cstdint>

#include "core/workload/workload_rules.h"

namespace hucprof {

// The workload behind a cgroup v2 id, as the sampler keys its samples
// (bpf_get_current_cgroup_id()). The kernel edge answers from the cgroup tree
// (workload/cgroup_workloads.h); tests answer from a table.
class WorkloadNames {
 public:
  virtual ~WorkloadNames() = default;
  // Never fails: an id that names no cgroup (any more) is kUnknownWorkload.
  virtual const Workload& workload_of(uint64_t cgroup_id) = 0;
};

// A cgroup that was gone before its samples were read: nothing names it.
inline const Workload kUnknownWorkload{Workload::Kind::Cgroup, "[unknown]", "", "", ""};

}  // namespace hucprof
