#include "core/profile/shown_windows.h"

#include <gtest/gtest.h>

namespace hucprof {
namespace {

StackProfile window_ending(int64_t end_ns, uint64_t kernel_samples) {
  StackProfile p;
  p.duration_ns = 300'000'000'000;
  p.time_unix_ns = end_ns - p.duration_ns;
  p.sampled_by_context = {{"kernel", kernel_samples}};
  return p;
}

// A window is found by its end for as long as fewer than kKept newer ones were shown, however
// many pages showed each.
TEST(ShownWindows, KeepsTheLastShownWindowsOnceEach) {
  ShownWindows shown;
  EXPECT_EQ(shown.remember(window_ending(1'000'000'000'000, 7)), 1'000'000'000'000);
  for (int page = 0; page < 10; ++page) shown.remember(window_ending(1'000'000'000'000, 7));
  EXPECT_FALSE(shown.find(999).has_value());
  for (int64_t i = 1; i < static_cast<int64_t>(ShownWindows::kKept); ++i) {
    shown.remember(window_ending(1'000'000'000'000 + i, 7 + static_cast<uint64_t>(i)));
  }
  const auto first = shown.find(1'000'000'000'000);
  ASSERT_TRUE(first.has_value()) << "ten pages of one window take one place";
  EXPECT_EQ(first->sampled_by_context.at("kernel"), 7u);
  shown.remember(window_ending(2'000'000'000'000, 99));
  EXPECT_FALSE(shown.find(1'000'000'000'000).has_value()) << "the oldest goes";
  EXPECT_EQ(shown.find(2'000'000'000'000)->sampled_by_context.at("kernel"), 99u);
  EXPECT_TRUE(shown.find(1'000'000'000'001).has_value());
}

}  // namespace
}  // namespace hucprof
