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
  index.on_gone = [this](uint64_t id, const std::string& path) { went(id, path); };
  index_.emplace(std::move(index));
}

Workload CgroupWorkloads::classify(const std::string& path) {
  Workload workload = classify_cgroup(path, rules_);
  // A pod kubelet has just started: its log directory may be new since the last read.
  if (workload.kind == Workload::Kind::Pod && !pods_.contains(workload.pod_uid)) read_pods();
  name_pod(workload, pods_);
  return workload;
}

bool CgroupWorkloads::pod_name_due(const Workload& workload) const {
  return workload.kind == Workload::Kind::Pod && workload.name == workload.pod_uid &&
         (!pods_read_ || options_.clock() - *pods_read_ >= options_.pod_refresh);
}

void CgroupWorkloads::read_pods() {
  const auto now = options_.clock();
  if (pods_read_ && now - *pods_read_ < options_.pod_refresh) return;
  pods_ = read_pod_log_dirs(options_.pod_logs_dir).pods;
  pods_read_ = now;
}

const Workload& CgroupWorkloads::workload_of(uint64_t cgroup_id) {
  // Named by UID only: asked again, as often as the pod log directories are read again.
  if (const Workload* cached = cache_.find(cgroup_id); cached && !pod_name_due(*cached)) {
    return *cached;
  }
  if (auto it = gone_.find(cgroup_id); it != gone_.end()) {
    Workload& workload = it->second.workload;
    if (pod_name_due(workload)) {
      read_pods();
      name_pod(workload, pods_);
    }
    return workload;
  }
  if (!index_) return kUnknownWorkload;
  std::optional<std::string> path = index_->path_of(cgroup_id);
  if (!path) return kUnknownWorkload;
  return cache_.put(cgroup_id, classify(*path));
}

void CgroupWorkloads::refresh() {
  if (index_) index_->refresh();
}

void CgroupWorkloads::apply(const std::vector<CgroupChange>& changes) {
  if (!index_) return;
  for (const CgroupChange& change : changes) {
    if (change.kind == CgroupChange::Kind::Made) {
      index_->made(change.id, change.parent, change.name);
    } else {
      index_->removed(change.id);  // its path goes to went() first
    }
  }
}

void CgroupWorkloads::went(uint64_t cgroup_id, const std::string& path) {
  std::optional<Workload> workload = cache_.take(cgroup_id);
  if (!workload) workload = classify(path);
  gone_.insert_or_assign(cgroup_id, Gone{std::move(*workload), drain_});
  gone_order_.emplace_back(cgroup_id, drain_);
  while (gone_.size() > options_.max_gone && !gone_order_.empty()) {
    const auto [id, drain] = gone_order_.front();
    gone_order_.pop_front();
    if (auto it = gone_.find(id); it != gone_.end() && it->second.drain == drain) {
      gone_.erase(it);
      ++forgotten_early_;
    }
  }
}

void CgroupWorkloads::end_drain() {
  // Kept through drains drain_ - kGoneDrains + 1 .. drain_: what went earlier is forgotten.
  while (!gone_order_.empty() && gone_order_.front().second + kGoneDrains <= drain_ + 1) {
    const auto [id, drain] = gone_order_.front();
    gone_order_.pop_front();
    if (auto it = gone_.find(id); it != gone_.end() && it->second.drain == drain) gone_.erase(it);
  }
  ++drain_;
}

CgroupWorkloads::Stats CgroupWorkloads::stats() const {
  Stats out;
  out.cached = cache_.size();
  out.gone = gone_.size();
  out.forgotten_early = forgotten_early_;
  if (index_) out.index = index_->stats();
  return out;
}

}  // namespace hucprof
