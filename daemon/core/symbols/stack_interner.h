#pragma once
#include <array>
#include <cstddef>
#include <cstdint>
#include <map>
#include <set>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "core/symbols/stack_profile.h"

namespace hucprof {

// One shared copy of every frame and every stack, so profiles of any age compare stacks by
// pointer and hold each one once. Bounded: past max_stacks distinct stacks, new ones become the
// single overflow stack (one "[stack limit reached]" frame) and say so, because a daemon that
// runs for months must not grow without end. Label sets are interned too, for the drain that
// looks them up; those nobody else holds any more (a workload that ended) are released by
// release_unused(): the profile store keeps its own (ProfileStore, which bounds workloads).
class StackInterner {
 public:
  static constexpr size_t kDefaultMaxStacks = 16384;  // one kernel stack map's worth
  static constexpr const char* kOverflowFunction = "[stack limit reached]";

  explicit StackInterner(size_t max_stacks = kDefaultMaxStacks);

  FramePtr frame(ProfileFrame frame);
  StackPtr stack(const ProfileStack& frames);  // frames must come from frame()
  // Found without building a string: this runs for every delta of every drain.
  LabelsPtr labels(std::string_view callsite, std::string_view syscall, std::string_view check,
                   std::string_view direction, std::string_view copy = {});
  // `labels` with another copy label, or other workload or task labels (comm, pid: 0 for none).
  // Each is one lookup, without building a string when the label set is interned already.
  LabelsPtr with_copy(const LabelsPtr& labels, std::string_view copy);
  LabelsPtr with_workload(const LabelsPtr& labels, std::string_view workload,
                          std::string_view kind);
  LabelsPtr with_task(const LabelsPtr& labels, std::string_view comm, int64_t pid);
  // Both at once, for a check sample (every sample key of every drain).
  LabelsPtr with_workload_and_task(const LabelsPtr& labels, std::string_view workload,
                                   std::string_view kind, std::string_view comm, int64_t pid);
  // Forgets the label sets only the interner holds: workloads come and go without end (a CI
  // node makes a container per job), their label sets must not stay.
  void release_unused();
  // The comms of the label sets interned now (after release_unused: those still held).
  std::set<std::string_view, std::less<>> comms() const;
  bool is_overflow(const StackPtr& stack) const { return stack == overflow_; }
  size_t stacks() const { return stacks_.size(); }
  size_t label_sets() const { return labels_.size(); }

 private:
  size_t max_stacks_;
  std::map<ProfileFrame, FramePtr> frames_;
  std::map<std::vector<const ProfileFrame*>, StackPtr> stacks_;
  LabelsPtr intern(const ProfileLabels& labels);

  // A label set by views: into the interned labels in the map, or into the caller's strings
  // while it is looked up.
  struct LabelsKey {
    std::string_view callsite, syscall, check, direction, copy, workload, workload_kind, comm;
    int64_t pid = 0;
    bool operator==(const LabelsKey&) const = default;
  };
  static LabelsKey key_of(const ProfileLabels& labels);
  struct LabelsKeyHash {
    size_t operator()(const LabelsKey& key) const;
  };
  // `labels` with `edit` applied to its key: itself where that changes nothing, else the
  // interned label set of the edited key, made if new.
  template <class Edit>
  LabelsPtr with(const LabelsPtr& labels, Edit edit);
  LabelsPtr find_or_intern(const LabelsKey& key);
  std::unordered_map<LabelsKey, LabelsPtr, LabelsKeyHash> labels_;
  StackPtr overflow_;
};

}  // namespace hucprof
