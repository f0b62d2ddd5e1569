#include "core/drain/delta_tracker.h"

#include <gtest/gtest.h>

#include <string>
#include <utility>

namespace hucprof {
namespace {

TEST(DeltaTracker, FirstReadIsTheWholeTotal) {
  DeltaTracker<int> tracker;
  EXPECT_EQ(tracker.update(1, 40), 40u);
  EXPECT_EQ(tracker.size(), 1u);
}

TEST(DeltaTracker, LaterReadsAreDifferences) {
  DeltaTracker<int> tracker;
  tracker.update(1, 40);
  EXPECT_EQ(tracker.update(1, 45), 5u);
  EXPECT_EQ(tracker.update(1, 45), 0u);
  EXPECT_EQ(tracker.update(1, 100), 55u);
}

TEST(DeltaTracker, KeysAreIndependent) {
  DeltaTracker<std::string> tracker;
  tracker.update("a", 10);
  EXPECT_EQ(tracker.update("b", 3), 3u);
  EXPECT_EQ(tracker.update("a", 12), 2u);
  EXPECT_EQ(tracker.update("b", 4), 1u);
  EXPECT_EQ(tracker.size(), 2u);
}

// The kernel deleted and re-created the key: its new total is all new.
TEST(DeltaTracker, TotalGoingDownRestartsFromZero) {
  DeltaTracker<int> tracker;
  tracker.update(7, 1000);
  EXPECT_EQ(tracker.update(7, 30), 30u);
  EXPECT_EQ(tracker.update(7, 35), 5u);
}

TEST(DeltaTracker, CompositeKeysAndWideValues) {
  DeltaTracker<std::pair<int, int>, uint64_t> tracker;
  const uint64_t big = uint64_t{1} << 40;
  EXPECT_EQ(tracker.update({1, 2}, big), big);
  EXPECT_EQ(tracker.update({1, 2}, big + 1), 1u);
  EXPECT_EQ(tracker.update({2, 1}, 9), 9u);
}

}  // namespace
}  // namespace hucprof
