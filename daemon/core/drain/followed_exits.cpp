#include "core/drain/followed_exits.h"

#include <algorithm>

#include "core/workload/record_target.h"

namespace hucprof {

FollowedExits::FollowedExits(std::vector<int> pids)
    : followed_(!pids.empty()), running_(std::move(pids)) {
  std::sort(running_.begin(), running_.end());
  running_.erase(std::unique(running_.begin(), running_.end()), running_.end());
}

std::optional<std::string> FollowedExits::note(const std::vector<int>& exited) {
  std::vector<int> gone;
  for (int pid : running_) {
    if (std::find(exited.begin(), exited.end(), pid) != exited.end()) gone.push_back(pid);
  }
  if (gone.empty()) return std::nullopt;
  std::erase_if(running_,
                [&](int pid) { return std::binary_search(gone.begin(), gone.end(), pid); });
  const std::string words = pid_words(gone) + " exited";
  if (running_.empty()) return words + ": stopping the recording";
  return words + "; still recording " + pid_words(running_);
}

std::string FollowedExits::until_words() const {
  const size_t n = running_.size();
  return "until " + pid_words(running_) + (n == 1 ? " exits" : " have exited");
}

}  // namespace hucprof
