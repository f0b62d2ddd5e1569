#include "core/symbols/stack_interner.h"

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
  for (std::string_view part : {key.callsite, key.syscall, key.check, key.direction, key.copy,
                                key.workload, key.workload_kind, key.comm}) {
    h = h * 31 + std::hash<std::string_view>{}(part);
  }
  return h;
}

StackInterner::LabelsKey StackInterner::key_of(const ProfileLabels& labels) {
  return {labels.callsite, labels.syscall,       labels.check, labels.direction, labels.copy,
          labels.workload, labels.workload_kind, labels.comm,  labels.pid};
}

LabelsPtr StackInterner::find_or_intern(const LabelsKey& key) {
  if (auto it = labels_.find(key); it != labels_.end()) return it->second;
  return intern({std::string(key.callsite), std::string(key.syscall), std::string(key.check),
                 std::string(key.direction), std::string(key.copy), std::string(key.workload),
                 std::string(key.workload_kind), std::string(key.comm), key.pid});
}

template <class Edit>
LabelsPtr StackInterner::with(const LabelsPtr& labels, Edit edit) {
  const LabelsKey was = key_of(*labels);
  LabelsKey key = was;
  edit(key);
  if (key == was) return labels;
  return find_or_intern(key);
}

LabelsPtr StackInterner::labels(std::string_view callsite, std::string_view syscall,
                                std::string_view check, std::string_view direction,
                                std::string_view copy) {
  return find_or_intern({callsite, syscall, check, direction, copy, {}, {}, {}, 0});
}

LabelsPtr StackInterner::with_copy(const LabelsPtr& labels, std::string_view copy) {
  return with(labels, [&](LabelsKey& key) { key.copy = copy; });
}

LabelsPtr StackInterner::with_workload(const LabelsPtr& labels, std::string_view workload,
                                       std::string_view kind) {
  return with(labels, [&](LabelsKey& key) {
    key.workload = workload;
    key.workload_kind = kind;
  });
}

LabelsPtr StackInterner::with_task(const LabelsPtr& labels, std::string_view comm, int64_t pid) {
  return with(labels, [&](LabelsKey& key) {
    key.comm = comm;
    key.pid = pid;
  });
}

LabelsPtr StackInterner::with_workload_and_task(const LabelsPtr& labels, std::string_view workload,
                                                std::string_view kind, std::string_view comm,
                                                int64_t pid) {
  return with(labels, [&](LabelsKey& key) {
    key.workload = workload;
    key.workload_kind = kind;
    key.comm = comm;
    key.pid = pid;
  });
}

void StackInterner::release_unused() {
  // use_count() is exact here: only the drain thread holds the interner, and a pointer only
  // the map holds cannot be copied by any other thread.
  std::erase_if(labels_, [](const auto& entry) { return entry.second.use_count() == 1; });
}

std::set<std::string_view, std::less<>> StackInterner::comms() const {
  std::set<std::string_view, std::less<>> out;
  for (const auto& [key, labels] : labels_) out.insert(key.comm);
  return out;
}

LabelsPtr StackInterner::intern(const ProfileLabels& labels) {
  auto shared = make_labels(labels);
  labels_.emplace(key_of(*shared), shared);
  return shared;
}

}  // namespace hucprof
