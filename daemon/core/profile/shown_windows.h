#pragma once
#include <cstddef>
#include <cstdint>
#include <deque>
#include <mutex>
#include <optional>
#include <utility>

#include "core/symbols/stack_profile.h"

namespace hucprof {

// The prediction windows the web view has shown, kept so that the page's "profile of this
// window" link serves exactly the window the page showed, though drains move the live one on
// between loading the page and following the link. A window is named by its end: the Unix time
// of its last drain, which no other window shares. Only windows a page showed are kept, once
// each however many pages showed them, and the last kKept of them: a link is good until that
// many newer windows have been shown. Thread-safe: the web view's handlers remember, the
// profile handler finds.
class ShownWindows {
 public:
  static constexpr size_t kKept = 4;

  // Keeps `window` under its end (once) and returns that end.
  int64_t remember(const StackProfile& window);
  // The window kept under `end_unix_ns`, if it still is.
  std::optional<StackProfile> find(int64_t end_unix_ns) const;

 private:
  mutable std::mutex mutex_;
  std::deque<std::pair<int64_t, StackProfile>> kept_;  // oldest first
};

// The name of a window: the Unix time (ns) its last drain ended at.
inline int64_t window_end_unix_ns(const StackProfile& window) {
  return window.time_unix_ns + window.duration_ns;
}

}  // namespace hucprof
