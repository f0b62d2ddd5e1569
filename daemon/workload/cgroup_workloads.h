#pragma once
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <optional>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "core/base/lru_cache.h"
#include "core/workload/cgroup_change.h"
#include "core/workload/pod_log_dir.h"
#include "core/workload/workload_names.h"
#include "workload/cgroup_index.h"
#include "workload/pod_log_dirs.h"

namespace hucprof {

// The workload of a cgroup v2 id from what the node itself says: the unified hierarchy
// (CgroupIndex), the rules (core/workload/workload_rules.h) and kubelet's pod log directories.
// Nothing is asked of an API server, a container runtime or D-Bus. Answers are cached per id (an
// LRU, so a node that makes a cgroup per job stays bounded); an id no cgroup has is not cached, so
// a cgroup made after its first samples is named once the index has walked again. A pod named by
// its UID only is looked up again once its log directory may have appeared. One drain thread
// asks: not thread-safe.
//
// A cgroup that is gone keeps the name it had while it ran, for the drains that may still read
// its samples: the one that learns it went (from the kernel's report, apply(), or because a walk
// no longer finds it) and the kGoneDrains - 1 after it; then it is forgotten, so names of ended
// workloads do not pile up. At most max_gone are kept at once (the ones that went longest ago
// are forgotten first): a burst of that many cgroups ending within three drains is the most
// that stays named.
class CgroupWorkloads final : public WorkloadNames {
 public:
  // The drain that learns a cgroup went reads what the kernel counted up to it; a task's last
  // instructions in a removed cgroup (its exit) land in the next generation, read by the drain
  // after. One more for margin.
  static constexpr uint64_t kGoneDrains = 3;

  struct Options {
    std::string cgroup_root;  // the unified root (find_unified_root); "": every id is unknown
    std::string pod_logs_dir = kPodLogsDir;
    size_t max_cached = 16384;
    size_t max_gone = 16384;
    std::chrono::milliseconds pod_refresh{10000};  // pod log directories read again at most so
    CgroupIndex::Clock clock;                      // steady_clock::now when empty
  };

  explicit CgroupWorkloads(Options options);
  CgroupWorkloads(const CgroupWorkloads&) = delete;
  CgroupWorkloads& operator=(const CgroupWorkloads&) = delete;

  const Workload& workload_of(uint64_t cgroup_id) override;

  // Walks the cgroup tree now: at start, once the kernel's reports flow, so that every cgroup
  // is either found or reported.
  void refresh();
  // What the kernel reported since the last drain, oldest first (CgroupNamesSession::read).
  void apply(const std::vector<CgroupChange>& changes);
  // A drain has named what it read: ends the drain for kGoneDrains.
  void end_drain();

  struct Stats {
    size_t cached = 0;             // live cgroups named
    size_t gone = 0;               // gone cgroups whose names are kept
    uint64_t forgotten_early = 0;  // gone names forgotten at max_gone, before kGoneDrains
    CgroupIndex::Stats index;
  };
  Stats stats() const;

 private:
  struct Gone {
    Workload workload;
    uint64_t drain = 0;  // the drain that learned it went
  };
  Workload classify(const std::string& path);
  // A pod named by its UID only whose log directory may have appeared since the last read.
  bool pod_name_due(const Workload& workload) const;
  void read_pods();  // unless read less than pod_refresh ago
  void went(uint64_t cgroup_id, const std::string& path);

  Options options_;
  std::optional<CgroupIndex> index_;
  WorkloadRules rules_ = WorkloadRules::defaults();
  PodNames pods_;
  std::optional<std::chrono::steady_clock::time_point> pods_read_;
  LruCache<uint64_t, Workload> cache_;
  std::unordered_map<uint64_t, Gone> gone_;
  std::deque<std::pair<uint64_t, uint64_t>> gone_order_;  // (id, drain) as they went
  uint64_t drain_ = 0;
  uint64_t forgotten_early_ = 0;
};

}  // namespace hucprof
