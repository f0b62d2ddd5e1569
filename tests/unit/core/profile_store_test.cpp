// The profile store sums drains by stack and labels; difference() cuts windows out of it.
#include "core/profile_store.h"

#include <gtest/gtest.h>

#include "core/stack_interner.h"
#include "core/usercopy_cost.h"
#include "core/usercopy_cost_share.h"

namespace hucprof {
namespace {

constexpr int64_t kSecond = 1'000'000'000;

class ProfileStoreTest : public testing::Test {
 protected:
  StackPtr stack(std::initializer_list<const char*> functions) {
    ProfileStack frames;
    for (const char* f : functions) frames.push_back(interner_.frame({f, "", 0, 0}));
    return interner_.stack(frames);
  }
  // Interned, as the builder hands them over: the store compares labels by pointer.
  LabelsPtr labels(const char* callsite, const char* syscall) {
    return interner_.labels(callsite, syscall, "object", "");
  }
  ProfileSample sample(StackPtr s, const char* callsite, uint64_t samples) {
    ProfileSample out{std::move(s), labels(callsite, "recvfrom"), {}};
    out.values[kSamples] = samples;
    return out;
  }
  static StackProfile header() {
    StackProfile h;
    h.sampling = true;
    h.sample_period_ns = 10101010;
    h.kernel = "6.1.0-18-amd64";
    h.time_unix_ns = 100 * kSecond;
    return h;
  }
  static const ProfileSample* find(const StackProfile& p, const StackPtr& s) {
    for (const auto& x : p.samples) {
      if (x.stack == s) return &x;
    }
    return nullptr;
  }

  StackInterner interner_;
  StackPtr udp_ = stack({"__check_object_size", "udp_recvmsg"});
  StackPtr tcp_ = stack({"__check_object_size", "tcp_recvmsg"});
};

TEST_F(ProfileStoreTest, SumsDrainsByStackAndLabels) {
  ProfileStore store(header());
  IntervalDeltas first;
  first.stacks = {sample(udp_, "udp_recvmsg", 3), sample(udp_, "udp_recvmsg", 2),
                  sample(tcp_, "tcp_recvmsg", 1)};
  first.sampled_by_context = {{"kernel", 100}, {"idle", 50}};
  store.add(first, 110 * kSecond);
  IntervalDeltas second;
  second.stacks = {sample(udp_, "udp_recvmsg", 4)};
  second.stacks.push_back(sample(udp_, "udp_recvmsg", 1));
  second.stacks.back().labels = labels("udp_recvmsg", "recvmsg");  // same stack, its own sample
  second.sampled_by_context = {{"kernel", 60}};
  store.add(second, 120 * kSecond);

  StackProfile all = store.cumulative();
  ASSERT_EQ(all.samples.size(), 3u);
  EXPECT_EQ(all.samples[0].values[kSamples], 9u);
  EXPECT_EQ(all.samples[0].labels->syscall, "recvfrom");
  EXPECT_EQ(all.samples[1].values[kSamples], 1u);
  EXPECT_EQ(all.samples[2].values[kSamples], 1u);
  EXPECT_EQ(all.samples[2].labels->syscall, "recvmsg");
  EXPECT_EQ(all.sampled_by_context.at("kernel"), 160u);
  EXPECT_EQ(all.sampled_by_context.at("idle"), 50u);
  EXPECT_EQ(all.time_unix_ns, 100 * kSecond);
  EXPECT_EQ(all.duration_ns, 20 * kSecond);
  EXPECT_EQ(all.kernel, "6.1.0-18-amd64");
  EXPECT_EQ(all.sample_period_ns, 10101010u);
}

TEST_F(ProfileStoreTest, LastIntervalIsWhatCameBetweenTheLastTwoCloses) {
  ProfileStore store(header());
  IntervalDeltas d;
  d.stacks = {sample(udp_, "udp_recvmsg", 5)};
  d.sampled_by_context = {{"kernel", 100}};
  store.add(d, 110 * kSecond);
  store.close_interval(110 * kSecond);
  d.stacks = {sample(tcp_, "tcp_recvmsg", 2)};
  store.add(d, 115 * kSecond);  // an extra drain (a profile request) does not end the interval
  d.stacks = {sample(udp_, "udp_recvmsg", 1)};
  store.add(d, 120 * kSecond);
  store.close_interval(120 * kSecond);

  StackProfile last = store.last_interval();
  ASSERT_EQ(last.samples.size(), 2u);
  EXPECT_EQ(find(last, udp_)->values[kSamples], 1u);
  EXPECT_EQ(find(last, tcp_)->values[kSamples], 2u);
  EXPECT_EQ(last.sampled_by_context.at("kernel"), 200u);
  EXPECT_EQ(last.time_unix_ns, 110 * kSecond);
  EXPECT_EQ(last.duration_ns, 10 * kSecond);

  store.close_interval(130 * kSecond);
  EXPECT_TRUE(store.last_interval().samples.empty()) << "nothing happened in the next one";
}

TEST_F(ProfileStoreTest, DifferenceIsTheWindowBetweenTwoCumulativeProfiles) {
  ProfileStore store(header());
  IntervalDeltas d;
  d.stacks = {sample(udp_, "udp_recvmsg", 5), sample(tcp_, "tcp_recvmsg", 2)};
  d.sampled_by_context = {{"kernel", 100}};
  store.add(d, 110 * kSecond);
  StackProfile before = store.cumulative();
  d.stacks = {sample(udp_, "udp_recvmsg", 3)};
  d.sampled_by_context = {{"kernel", 40}};
  store.add(d, 140 * kSecond);

  StackProfile window = difference(store.cumulative(), before);
  ASSERT_EQ(window.samples.size(), 1u) << "tcp_recvmsg did not change: left out";
  EXPECT_EQ(window.samples[0].stack, udp_);
  EXPECT_EQ(window.samples[0].values[kSamples], 3u);
  EXPECT_EQ(window.sampled_by_context.at("kernel"), 40u);
  EXPECT_EQ(window.time_unix_ns, 110 * kSecond);
  EXPECT_EQ(window.duration_ns, 30 * kSecond);
}

TEST_F(ProfileStoreTest, WindowCoversTheSameDrainsAsThePrediction) {
  // The web view shows window(), /metrics the prediction: fed the same drains at the same times,
  // the two must give the same share, also once the window slides and its points are thinned.
  for (const double window_seconds : {30.0, 100.0, 10000.0}) {
    ProfileStore store(header(), std::chrono::duration<double>(window_seconds), 5.0);
    UsercopyCostShare share(std::chrono::duration<double>{window_seconds});
    share.observe(5.0, {});  // counting starts at zero, as the pipeline starts both
    uint64_t in_checks = 0, busy = 0;
    for (int drain = 1; drain <= 400; ++drain) {
      const double at = 5.0 + drain * 1.0;
      IntervalDeltas d;
      const uint64_t udp = drain % 7, tcp = drain < 200 ? 3 : 0;
      d.stacks = {sample(udp_, "udp_recvmsg", udp), sample(tcp_, "tcp_recvmsg", tcp)};
      d.sampled_by_context = {{"kernel", 60}, {"user", 40}, {"idle", 900}};
      d.excluded_samples = {{"interrupt", drain % 2}};
      store.add(d, (100 + drain) * kSecond, at);
      in_checks += udp + tcp;
      busy += 100;
      share.observe(at, {{{"udp_recvmsg", in_checks}}, busy});
      if (drain % 37 != 0 && drain != 400) continue;
      const StackProfile w = store.window();
      const auto estimate = share.estimate();
      ASSERT_TRUE(estimate);
      const UsercopyCost cost = summarize_cost(w, 0);
      ASSERT_TRUE(cost.share_of_busy());
      EXPECT_DOUBLE_EQ(*cost.share_of_busy(), estimate->share)
          << "window " << window_seconds << " s, drain " << drain;
      EXPECT_EQ(cost.busy_samples(), estimate->busy);
      EXPECT_DOUBLE_EQ(static_cast<double>(w.duration_ns) / kSecond, estimate->window_seconds);
      EXPECT_EQ(w.time_unix_ns + w.duration_ns, (100 + drain) * kSecond);
    }
  }
}

TEST_F(ProfileStoreTest, WindowStartsWithTheFirstDrainAndCarriesTheExclusions) {
  ProfileStore store(header(), std::chrono::seconds(300), 0.0);
  IntervalDeltas d;
  d.stacks = {sample(udp_, "udp_recvmsg", 5)};
  d.sampled_by_context = {{"kernel", 100}, {"user", 20}};
  d.excluded_samples = {{"interrupt", 2}};
  store.add(d, 110 * kSecond, 10.0);
  StackProfile w = store.window();
  ASSERT_EQ(w.samples.size(), 1u) << "the first drain is inside the window";
  EXPECT_EQ(w.samples[0].values[kSamples], 5u);
  EXPECT_EQ(w.sampled_by_context.at("kernel"), 100u);
  EXPECT_EQ(w.excluded_samples.at("interrupt"), 2u);
  EXPECT_EQ(w.duration_ns, 10 * kSecond);
  EXPECT_EQ(store.cumulative().excluded_samples.at("interrupt"), 2u);
  store.close_interval(110 * kSecond);
  EXPECT_EQ(store.last_interval().excluded_samples.at("interrupt"), 2u);
}

}  // namespace
}  // namespace hucprof
