// Skipped samples (core/drain/skipped_samples.h) travel with the profiles as probe mode's missed
// checks do: every view of the store, and difference(), carries the skips of its own drains.
#include <gtest/gtest.h>

#include <chrono>
#include <optional>

#include "core/profile/profile_store.h"

namespace hucprof {
namespace {

constexpr int64_t kOneSecondNs = 1'000'000'000;

IntervalDeltas drained_with_skips(std::optional<uint64_t> skipped) {
  IntervalDeltas d;
  d.sampled_by_context = {{"kernel", 100}};
  // Probe mode's reasons beside it must not be taken for skipped samples, nor these for them.
  d.missed = {{{"checks", "recursion"}, 5}};
  if (skipped) d.missed[{"samples", "samples_skipped"}] = *skipped;
  return d;
}

StackProfile sampling() {
  StackProfile header;
  header.sampling = true;
  return header;
}

TEST(SkippedSamplesInProfiles, EveryViewCarriesTheSkipsOfItsDrains) {
  ProfileStore store(sampling(), std::chrono::seconds(10), 0);
  store.add(drained_with_skips(36), 1 * kOneSecondNs, 1.0);
  store.close_interval(1 * kOneSecondNs);
  store.add(drained_with_skips(4), 2 * kOneSecondNs, 2.0);
  store.close_interval(2 * kOneSecondNs);
  EXPECT_EQ(store.cumulative().skipped_samples, 40u);
  EXPECT_EQ(store.window().skipped_samples, 40u);
  EXPECT_EQ(store.last_interval().skipped_samples, 4u);
  EXPECT_EQ(store.cumulative().missed_checks.at("recursion"), 10u);

  // ?seconds=N and `hucprof record`: the window between two cumulative profiles.
  const StackProfile before = store.cumulative();
  store.add(drained_with_skips(10), 3 * kOneSecondNs, 3.0);
  EXPECT_EQ(difference(store.cumulative(), before).skipped_samples, 10u);
}

TEST(SkippedSamplesInProfiles, ADrainThatCouldNotCountAddsNothingAndTakesNothingAway) {
  ProfileStore store(sampling(), std::chrono::seconds(10), 0);
  store.add(drained_with_skips(7), 1 * kOneSecondNs, 1.0);
  store.close_interval(1 * kOneSecondNs);
  store.add(drained_with_skips(std::nullopt), 2 * kOneSecondNs, 2.0);
  store.close_interval(2 * kOneSecondNs);
  EXPECT_EQ(store.cumulative().skipped_samples, 7u);
  // Counted since start, none in this interval: a 0, not "not counted".
  EXPECT_EQ(store.last_interval().skipped_samples, 0u);
}

TEST(SkippedSamplesInProfiles, UncountedStaysUnsetEverywhere) {
  ProfileStore store(sampling(), std::chrono::seconds(10), 0);
  const StackProfile before = store.cumulative();
  store.add(drained_with_skips(std::nullopt), 1 * kOneSecondNs, 1.0);
  store.close_interval(1 * kOneSecondNs);
  EXPECT_FALSE(store.cumulative().skipped_samples);
  EXPECT_FALSE(store.window().skipped_samples);
  EXPECT_FALSE(store.last_interval().skipped_samples);
  EXPECT_FALSE(difference(store.cumulative(), before).skipped_samples);
}

TEST(SkippedSamplesInProfiles, AWindowWhoseDrainsAreGoneSaysNoneOnceTheStoreCounts) {
  ProfileStore store(sampling(), std::chrono::seconds(10), 0);
  store.add(drained_with_skips(3), 1 * kOneSecondNs, 1.0);
  // Counting began before `before`: everything after it is the window's.
  const StackProfile before = store.cumulative();
  store.add(drained_with_skips(0), 2 * kOneSecondNs, 2.0);
  EXPECT_EQ(difference(store.cumulative(), before).skipped_samples, 0u);
  // Past the 10 s window, with drains that could not count: the window holds none of the 3.
  store.add(drained_with_skips(std::nullopt), 30 * kOneSecondNs, 30.0);
  store.add(drained_with_skips(std::nullopt), 31 * kOneSecondNs, 31.0);
  EXPECT_EQ(store.window().skipped_samples, 0u);
}

}  // namespace
}  // namespace hucprof
