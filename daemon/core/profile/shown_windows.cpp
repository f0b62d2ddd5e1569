#include "core/profile/shown_windows.h"

#include <algorithm>

namespace hucprof {

int64_t ShownWindows::remember(const StackProfile& window) {
  const int64_t end = window_end_unix_ns(window);
  std::lock_guard lock(mutex_);
  const bool kept = std::any_of(kept_.begin(), kept_.end(),
                                [end](const auto& entry) { return entry.first == end; });
  if (!kept) {
    kept_.emplace_back(end, window);
    if (kept_.size() > kKept) kept_.pop_front();
  }
  return end;
}

std::optional<StackProfile> ShownWindows::find(int64_t end_unix_ns) const {
  std::lock_guard lock(mutex_);
  for (const auto& [end, window] : kept_) {
    if (end == end_unix_ns) return window;
  }
  return std::nullopt;
}

}  // namespace hucprof
