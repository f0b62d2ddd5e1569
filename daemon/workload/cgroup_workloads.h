#pragma once
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>

#include "core/lru_cache.h"
#include "core/pod_log_dir.h"
#include "core/workload_names.h"
#include "workload/cgroup_index.h"
#include "workload/pod_log_dirs.h"

namespace hucprof {

// The workload of a cgroup v2 id from what the node itself says: the unified hierarchy
// (CgroupIndex), the rules (core/workload_rules.h) and kubelet's pod log directories. Nothing is
// asked of an API server, a container runtime or D-Bus. Answers are cached per id (an LRU, so a
// node that makes a cgroup per job stays bounded); an id no cgroup has is not cached, so a
// cgroup made after its first samples is named once the index has walked again. A pod named by
// its UID only is looked up again once its log directory may have appeared. One drain thread
// asks: not thread-safe.
class CgroupWorkloads final : public WorkloadNames {
 public:
  struct Options {
    std::string cgroup_root;  // the unified root (find_unified_root); "": every id is unknown
    std::string pod_logs_dir = kPodLogsDir;
    size_t max_cached = 16384;
    std::chrono::milliseconds pod_refresh{10000};  // pod log directories read again at most so
    CgroupIndex::Clock clock;                      // steady_clock::now when empty
  };

  explicit CgroupWorkloads(Options options);

  const Workload& workload_of(uint64_t cgroup_id) override;

 private:
  Workload classify(const std::string& path);

  Options options_;
  std::optional<CgroupIndex> index_;
  WorkloadRules rules_ = WorkloadRules::defaults();
  PodNames pods_;
  std::optional<std::chrono::steady_clock::time_point> pods_read_;
  LruCache<uint64_t, Workload> cache_;
};

}  // namespace hucprof
