#pragma once
#include <array>
#include <cstddef>
#include <map>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "core/stack_profile.h"

namespace hucprof {

// One shared copy of every frame and every stack, so profiles of any age compare stacks by
// pointer and hold each one once. Bounded: past max_stacks distinct stacks, new ones become the
// single overflow stack (one "[stack limit reached]" frame) and say so, because a daemon that
// runs for months must not grow without end.
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
  bool is_overflow(const StackPtr& stack) const { return stack == overflow_; }
  size_t stacks() const { return stacks_.size(); }

 private:
  size_t max_stacks_;
  std::map<ProfileFrame, FramePtr> frames_;
  std::map<std::vector<const ProfileFrame*>, StackPtr> stacks_;
  using LabelsKey = std::array<std::string_view, 5>;  // views into the interned labels
  struct LabelsKeyHash {
    size_t operator()(const LabelsKey& key) const;
  };
  std::unordered_map<LabelsKey, LabelsPtr, LabelsKeyHash> labels_;
  StackPtr overflow_;
};

}  // namespace hucprof
