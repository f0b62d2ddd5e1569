// The profile store sums drains by stack and labels; difference() cuts windows out of it.
#include "core/profile/profile_store.h"

#include <gtest/gtest.h>

#include "core/cost/usercopy_cost.h"
#include "core/cost/usercopy_cost_share.h"
#include "core/symbols/stack_interner.h"
#include "core/symbols/task_labels.h"

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
  // One sample of `n` in the checks and 10 busy kernel samples, of workload `name`.
  IntervalDeltas of_workload(const std::string& name, uint64_t n) {
    IntervalDeltas d;
    ProfileSample s{
        udp_, interner_.with_workload(labels("udp_recvmsg", "recvfrom"), name, "unit"), {}};
    s.values[kSamples] = n;
    d.stacks = {s};
    d.busy_by_workload[name] = WorkloadBusy{"unit", 10, 0, 0};
    d.sampled_by_context = {{"kernel", 10}};
    return d;
  }
  // One sample of `n` in the checks run by command `comm`, of workload `workload`.
  IntervalDeltas of_comm(const std::string& comm, uint64_t n, const std::string& workload = "w") {
    IntervalDeltas d = of_workload(workload, n);
    d.stacks[0].labels = interner_.with_task(d.stacks[0].labels, comm, 0);
    return d;
  }
  static uint64_t samples_of_comm(const StackProfile& p, std::string_view comm) {
    uint64_t n = 0;
    for (const auto& x : p.samples) {
      if (x.labels->comm == comm) n += x.values[kSamples];
    }
    return n;
  }
  static uint64_t samples_of(const StackProfile& p, std::string_view workload) {
    uint64_t n = 0;
    for (const auto& x : p.samples) {
      if (x.labels->workload == workload) n += x.values[kSamples];
    }
    return n;
  }
  static uint64_t all_samples(const StackProfile& p) {
    uint64_t n = 0;
    for (const auto& x : p.samples) n += x.values[kSamples];
    return n;
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

// A node that starts a workload a second for months: the since-start profile names the recent
// ones and folds the rest, exactly.
TEST_F(ProfileStoreTest, PastTheNamedWorkloadsTheQuietestOutsideTheWindowIsFolded) {
  ProfileStore store(header(), std::chrono::seconds(60), 0.0);
  const size_t named = ProfileStore::kNamedWorkloads;
  for (size_t i = 0; i < named; ++i) {
    store.add(of_workload("job-" + std::to_string(i), 3), (101 + i) * kSecond, 1.0 + i);
  }
  EXPECT_EQ(store.size().named_workloads, named);
  EXPECT_EQ(store.size().folded_workloads, 0u);
  const double later = 1.0 + named + 100;  // job-0 .. are outside the 60 s window now
  store.add(of_workload("job-new", 5), 500 * kSecond, later);
  EXPECT_EQ(store.size().named_workloads, named) << "one folded to make room for one";
  EXPECT_EQ(store.size().folded_workloads, 1u);

  const StackProfile all = store.cumulative();
  EXPECT_EQ(samples_of(all, "job-0"), 0u) << "the least recently seen is folded";
  EXPECT_EQ(samples_of(all, kFoldedWorkload), 3u);
  EXPECT_EQ(samples_of(all, "job-1"), 3u);
  EXPECT_EQ(samples_of(all, "job-new"), 5u);
  EXPECT_EQ(all_samples(all), 3 * named + 5) << "nothing lost";
  EXPECT_FALSE(all.busy_by_workload.contains("job-0"));
  const WorkloadBusy& folded = all.busy_by_workload.at(std::string(kFoldedWorkload));
  EXPECT_EQ(folded.kernel, 10u);
  EXPECT_EQ(folded.kind, "") << "it mixes kinds";
  for (const auto& s : all.samples) {
    if (s.labels->workload == kFoldedWorkload) {
      EXPECT_EQ(s.labels->workload_kind, "");
    }
  }
}

// Churn as a CI node has it: a new workload every drain for longer than the window, each with
// the label sets a UDP flood leaves (call sites by check steps). What the store holds stops
// growing once the window is full: the folded workloads' label sets are forgotten.
TEST_F(ProfileStoreTest, UnderSteadyChurnWhatTheStoreHoldsStopsGrowing) {
  ProfileStore store(header(), std::chrono::seconds(300), 0.0);
  const char* callsites[] = {"udp_sendmsg", "udp_recvmsg", "__sys_sendto"};
  const char* checks[] = {"entry", "virt_addr_valid", "stack_object", "slab_object"};
  auto drain = [&](size_t i) {
    IntervalDeltas d;
    const std::string name = "job-" + std::to_string(i);
    for (const char* callsite : callsites) {
      for (const char* check : checks) {
        ProfileSample s{udp_,
                        interner_.with_workload(interner_.labels(callsite, "sendto", check, ""),
                                                name, "cgroup"),
                        {}};
        s.values[kSamples] = 1;
        d.stacks.push_back(s);
      }
    }
    d.busy_by_workload[name] = WorkloadBusy{"cgroup", 10, 0, 0};
    d.sampled_by_context = {{"kernel", 10}};
    store.add(d, (101 + i) * kSecond, 1.0 + i);
    interner_.release_unused();
  };
  size_t i = 0;
  for (; i < 1000; ++i) drain(i);
  const ProfileStore::Size at_1000 = store.size();
  for (; i < 3000; ++i) drain(i);
  const ProfileStore::Size at_3000 = store.size();
  // The window's 300 drains, give or take its start's resolution (300 s / kMaxPoints).
  EXPECT_LE(at_3000.named_workloads, 305u);
  EXPECT_EQ(at_3000.named_workloads, at_1000.named_workloads);
  EXPECT_EQ(at_3000.label_sets, at_1000.label_sets);
  EXPECT_EQ(at_3000.samples, at_1000.samples);
  EXPECT_EQ(at_3000.label_sets, 12 * (at_3000.named_workloads + 1)) << "and [other workloads]";
  EXPECT_EQ(at_3000.folded_workloads, 3000 - at_3000.named_workloads);
}

TEST_F(ProfileStoreTest, AWorkloadInsideTheWindowIsNeverFoldedPastTheBoundNewOnesAre) {
  ProfileStore store(header(), std::chrono::seconds(3600), 0.0);
  const size_t most = ProfileStore::kMaxNamedWorkloads;
  for (size_t i = 0; i <= most; ++i) {
    store.add(of_workload("burst-" + std::to_string(i), 1), (101 + i) * kSecond, 1.0 + i);
  }
  EXPECT_EQ(store.size().named_workloads, most);
  EXPECT_EQ(store.size().folded_workloads, 0u);
  const StackProfile window = store.window();
  EXPECT_EQ(samples_of(window, "burst-0"), 1u);
  EXPECT_EQ(samples_of(window, "burst-" + std::to_string(most - 1)), 1u);
  EXPECT_EQ(samples_of(window, "burst-" + std::to_string(most)), 0u) << "past the bound";
  EXPECT_EQ(samples_of(window, kFoldedWorkload), 1u);
  EXPECT_EQ(all_samples(window), most + 1);
}

// ?seconds=N and `record` cut windows out of two cumulative profiles: a fold in between, and the
// folded workload seen again, take nothing from the window and add nothing to it.
TEST_F(ProfileStoreTest, DifferenceStaysExactAcrossAFold) {
  ProfileStore store(header(), std::chrono::seconds(60), 0.0);
  const size_t named = ProfileStore::kNamedWorkloads;
  for (size_t i = 0; i < named; ++i) {
    store.add(of_workload("job-" + std::to_string(i), 3), (101 + i) * kSecond, 1.0 + i);
  }
  const StackProfile before = store.cumulative();
  store.add(of_workload("job-new", 5), 500 * kSecond, 1000.0);  // folds job-0
  store.add(of_workload("job-0", 2), 501 * kSecond, 1001.0);    // back: folds job-1
  ASSERT_EQ(store.size().folded_workloads, 2u);

  const StackProfile window = difference(store.cumulative(), before);
  EXPECT_EQ(samples_of(window, "job-new"), 5u);
  EXPECT_EQ(samples_of(window, "job-0"), 2u) << "its new samples only";
  EXPECT_EQ(samples_of(window, kFoldedWorkload), 0u) << "what was folded came before";
  EXPECT_EQ(all_samples(window), 7u);
  EXPECT_EQ(window.busy_by_workload.size(), 2u);
  EXPECT_EQ(window.busy_by_workload.at("job-0").kernel, 10u);
  EXPECT_EQ(window.sampled_by_context.at("kernel"), 20u);
}

TEST_F(ProfileStoreTest, AFoldedWorkloadsSlotTakenAgainCarriesNoneOfItsCounts) {
  // Its entry's slot is reused by the next new entry: the window, which refers to slots, must
  // not hand the old counts to the new one.
  ProfileStore store(header(), std::chrono::seconds(10), 0.0);
  const size_t named = ProfileStore::kNamedWorkloads;
  for (size_t i = 0; i < named; ++i) {
    // Drains further apart than the window's thinning (window / DrainWindow::kMaxPoints).
    store.add(of_workload("job-" + std::to_string(i), 7), (101 + i) * kSecond, 0.05 * (i + 1));
  }
  store.add({}, 399 * kSecond, 30.0);  // a quiet drain: the window moves past them
  store.add(of_workload("job-new", 1), 400 * kSecond, 31.0);
  EXPECT_EQ(store.size().folded_workloads, 1u);
  const StackProfile window = store.window();
  EXPECT_EQ(samples_of(window, "job-new"), 1u);
  EXPECT_EQ(all_samples(window), 1u) << "the others were added before the window";
  EXPECT_EQ(store.size().samples, named + 1) << "job-0's entry became [other workloads]'s";
}

// Comms come and go as workloads do (a CI node's scripts, io_uring's iou-wrk-NNN): the store
// names the recent ones, not the first ones it saw.
TEST_F(ProfileStoreTest, PastTheNamedCommsTheQuietestOutsideTheWindowIsFolded) {
  ProfileStore store(header(), std::chrono::seconds(60), 0.0);
  const size_t named = ProfileStore::kNamedComms;
  for (size_t i = 0; i < named; ++i) {
    store.add(of_comm("job-" + std::to_string(i), 3), (101 + i) * kSecond, 1.0 + i);
  }
  EXPECT_EQ(store.size().named_comms, named);
  const size_t entries = store.size().samples;
  store.add(of_comm("iou-wrk-1", 5), 500 * kSecond, 1.0 + named + 100);
  EXPECT_EQ(store.size().named_comms, named) << "one folded to make room for one";
  EXPECT_EQ(store.size().folded_comms, 1u);
  EXPECT_EQ(store.size().samples, entries + 1) << "job-0's entry became [other comms]'s";

  const StackProfile all = store.cumulative();
  EXPECT_EQ(samples_of_comm(all, "job-0"), 0u) << "the least recently seen is folded";
  EXPECT_EQ(samples_of_comm(all, kFoldedComm), 3u);
  EXPECT_EQ(samples_of_comm(all, "job-1"), 3u);
  EXPECT_EQ(samples_of_comm(all, "iou-wrk-1"), 5u) << "a late command is named";
  EXPECT_EQ(samples_of(all, "w"), 3 * named + 5) << "the workload keeps every sample";
  EXPECT_EQ(all_samples(all), 3 * named + 5) << "nothing lost";
}

TEST_F(ProfileStoreTest, ACommInsideTheWindowIsNeverFoldedPastTheBoundNewOnesAre) {
  ProfileStore store(header(), std::chrono::seconds(3600), 0.0);
  const size_t most = ProfileStore::kMaxNamedComms;
  for (size_t i = 0; i <= most; ++i) {
    store.add(of_comm("burst-" + std::to_string(i), 1), (101 + i) * kSecond, 1.0 + i);
  }
  EXPECT_EQ(store.size().named_comms, most) << "bounded at any instant";
  EXPECT_EQ(store.size().folded_comms, 0u);
  const StackProfile window = store.window();
  EXPECT_EQ(samples_of_comm(window, "burst-0"), 1u);
  EXPECT_EQ(samples_of_comm(window, "burst-" + std::to_string(most)), 0u) << "past the bound";
  EXPECT_EQ(samples_of_comm(window, kFoldedComm), 1u);
  EXPECT_EQ(all_samples(window), most + 1);
}

TEST_F(ProfileStoreTest, DifferenceStaysExactAcrossACommFold) {
  ProfileStore store(header(), std::chrono::seconds(60), 0.0);
  const size_t named = ProfileStore::kNamedComms;
  for (size_t i = 0; i < named; ++i) {
    store.add(of_comm("job-" + std::to_string(i), 3), (101 + i) * kSecond, 1.0 + i);
  }
  const StackProfile before = store.cumulative();
  store.add(of_comm("new", 5), 500 * kSecond, 1000.0);    // folds job-0
  store.add(of_comm("job-0", 2), 501 * kSecond, 1001.0);  // back: folds job-1
  ASSERT_EQ(store.size().folded_comms, 2u);

  const StackProfile window = difference(store.cumulative(), before);
  EXPECT_EQ(samples_of_comm(window, "new"), 5u);
  EXPECT_EQ(samples_of_comm(window, "job-0"), 2u) << "its new samples only";
  EXPECT_EQ(samples_of_comm(window, kFoldedComm), 0u) << "what was folded came before";
  EXPECT_EQ(all_samples(window), 7u);
}

TEST_F(ProfileStoreTest, CommAndWorkloadFoldsTogetherKeepEverySample) {
  // A workload folded, then the comm of its folded entries: both folds move the same counts.
  ProfileStore store(header(), std::chrono::seconds(60), 0.0);
  for (size_t i = 0; i < ProfileStore::kNamedComms; ++i) {
    const std::string n = std::to_string(i);
    store.add(of_comm("job-" + n, 3, "unit-" + n), (101 + i) * kSecond, 1.0 + i);
  }
  const StackProfile before = store.cumulative();
  store.add(of_comm("late", 1, "unit-late"), 500 * kSecond, 1000.0);
  EXPECT_EQ(store.size().folded_workloads, 1u);
  EXPECT_EQ(store.size().folded_comms, 1u);
  const StackProfile all = store.cumulative();
  EXPECT_EQ(all_samples(all), 3 * ProfileStore::kNamedComms + 1);
  EXPECT_EQ(samples_of(all, kFoldedWorkload), 3u);
  EXPECT_EQ(samples_of_comm(all, kFoldedComm), 3u);
  const StackProfile window = difference(all, before);
  EXPECT_EQ(all_samples(window), 1u) << "the fold of both is no new sample";
}

}  // namespace
}  // namespace hucprof
