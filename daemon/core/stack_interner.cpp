#include "core/stack_interner.h"

#include <utility>

namespace hucprof {

StackInterner::StackInterner(size_t max_stacks) : max_stacks_(max_stacks) {
  overflow_ = std::make_shared<const ProfileStack>(
      ProfileStack{frame(ProfileFrame{kOverflowFunction, "", 0, 0})});
}

FramePtr StackInterner::frame(ProfileFrame frame) {
  auto it = frames_.find(frame);
  if (it != frames_.end()) return it->second;
  auto shared = std::make_shared<const ProfileFrame>(frame);
  frames_.emplace(std::move(frame), shared);
  return shared;
}

StackPtr StackInterner::stack(const ProfileStack& frames) {
  std::vector<const ProfileFrame*> key;
  key.reserve(frames.size());
  for (const FramePtr& f : frames) key.push_back(f.get());
  if (auto it = stacks_.find(key); it != stacks_.end()) return it->second;
  if (stacks_.size() >= max_stacks_) return overflow_;
  auto shared = std::make_shared<const ProfileStack>(frames);
  stacks_.emplace(std::move(key), shared);
  return shared;
}

size_t StackInterner::LabelsKeyHash::operator()(const LabelsKey& key) const {
  size_t h = std::hash<int64_t>{}(key.pid);
  for (std::string_view part : key.names) h = h * 31 + std::hash<std::string_view>{}(part);
  return h;
}

StackInterner::LabelsKey StackInterner::key_of(const ProfileLabels& labels) {
  return {{labels.callsite, labels.syscall, labels.check, labels.direction, labels.copy,
           labels.workload, labels.workload_kind, labels.comm},
          labels.pid};
}

LabelsPtr StackInterner::labels(std::string_view callsite, std::string_view syscall,
                                std::string_view check, std::string_view direction,
                                std::string_view copy) {
  if (auto it = labels_.find(LabelsKey{{callsite, syscall, check, direction, copy, {}, {}, {}}});
      it != labels_.end()) {
    return it->second;
  }
  return intern({std::string(callsite), std::string(syscall), std::string(check),
                 std::string(direction), std::string(copy)});
}

LabelsPtr StackInterner::with_workload(const LabelsPtr& labels, std::string_view workload,
                                       std::string_view kind) {
  if (labels->workload == workload && labels->workload_kind == kind) return labels;
  LabelsKey key = key_of(*labels);
  key.names[5] = workload;
  key.names[6] = kind;
  if (auto it = labels_.find(key); it != labels_.end()) return it->second;
  ProfileLabels out = *labels;
  out.workload = workload;
  out.workload_kind = kind;
  return intern(out);
}

LabelsPtr StackInterner::with_task(const LabelsPtr& labels, std::string_view comm, int64_t pid) {
  if (labels->comm == comm && labels->pid == pid) return labels;
  LabelsKey key = key_of(*labels);
  key.names[7] = comm;
  key.pid = pid;
  if (auto it = labels_.find(key); it != labels_.end()) return it->second;
  ProfileLabels out = *labels;
  out.comm = comm;
  out.pid = pid;
  return intern(out);
}

void StackInterner::release_unused() {
  // use_count() is exact here: only the drain thread holds the interner, and a pointer only
  // the map holds cannot be copied by any other thread.
  std::erase_if(labels_, [](const auto& entry) { return entry.second.use_count() == 1; });
}

LabelsPtr StackInterner::intern(const ProfileLabels& labels) {
  auto shared = make_labels(labels);
  labels_.emplace(key_of(*shared), shared);
  return shared;
}

}  // namespace hucprof
