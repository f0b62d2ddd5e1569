#include "workload/cgroup_workloads.h"

#include <utility>

namespace hucprof {

CgroupWorkloads::CgroupWorkloads(Options options)
    : options_(std::move(options)), cache_(options_.max_cached) {
  if (!options_.clock) options_.clock = [] { return std::chrono::steady_clock::now(); };
  if (options_.cgroup_root.empty()) return;  // every id is unknown
  CgroupIndex::Options index;
  index.root = options_.cgroup_root;
  index.clock = options_.clock;
  index_.emplace(std::move(index));
}

Workload CgroupWorkloads::classify(const std::string& path) {
  Workload workload = classify_cgroup(path, rules_);
  if (workload.kind != Workload::Kind::Pod || pods_.contains(workload.pod_uid)) {
    name_pod(workload, pods_);
    return workload;
  }
  // A pod kubelet has just started: its log directory may be new since the last read.
  const auto now = options_.clock();
  if (!pods_read_ || now - *pods_read_ >= options_.pod_refresh) {
    pods_ = read_pod_log_dirs(options_.pod_logs_dir).pods;
    pods_read_ = now;
  }
  name_pod(workload, pods_);
  return workload;
}

const Workload& CgroupWorkloads::workload_of(uint64_t cgroup_id) {
  if (const Workload* cached = cache_.find(cgroup_id)) {
    // Named by UID only: ask the pod log directories again, as often as they are re-read.
    const bool named = cached->kind != Workload::Kind::Pod || cached->name != cached->pod_uid;
    if (named || (pods_read_ && options_.clock() - *pods_read_ < options_.pod_refresh)) {
      return *cached;
    }
  }
  if (!index_) return kUnknownWorkload;
  std::optional<std::string> path = index_->path_of(cgroup_id);
  if (!path) return kUnknownWorkload;
  return cache_.put(cgroup_id, classify(*path));
}

}  // namespace hucprof
