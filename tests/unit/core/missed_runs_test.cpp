#include <gtest/gtest.h>

#include "core/drain/missed_runs.h"
#include "core/profile/profile_store.h"

namespace hucprof {
namespace {

using Key = std::pair<std::string, std::string>;

RawMisses check_program(std::optional<uint64_t> recursion,
                        std::optional<uint64_t> kprobe = std::nullopt) {
  return {"huc_fentry_check_direct", MissedWhat::checks, recursion, kprobe};
}

TEST(MissedRuns, EachDrainGetsWhatTheKernelCountedSinceTheOneBefore) {
  MissedRuns runs;
  EXPECT_EQ(runs.update({check_program(36)}), (MissedCounts{{Key{"checks", "recursion"}, 36}}));
  EXPECT_EQ(runs.update({check_program(36)}), (MissedCounts{{Key{"checks", "recursion"}, 0}}));
  EXPECT_EQ(runs.update({check_program(121)}), (MissedCounts{{Key{"checks", "recursion"}, 85}}));
}

TEST(MissedRuns, WhatTheKernelDoesNotCountHasNoEntryNotAZero) {
  MissedRuns runs;
  EXPECT_TRUE(runs.update({check_program(std::nullopt)}).empty());
  EXPECT_EQ(missed_checks(runs.update({check_program(std::nullopt)})), std::nullopt);
}

TEST(MissedRuns, KprobeAndRecursionAreReasonsOfTheirOwnAndAddUpPerWhat) {
  MissedRuns runs;
  RawMisses slab{"huc_kprobe_slab", MissedWhat::subchecks, 2, 1};
  const MissedCounts got = runs.update({check_program(5, 3), slab});
  EXPECT_EQ(got, (MissedCounts{{Key{"checks", "kprobe_missed"}, 3},
                               {Key{"checks", "recursion"}, 5},
                               {Key{"subchecks", "kprobe_missed"}, 1},
                               {Key{"subchecks", "recursion"}, 2}}));
  EXPECT_EQ(missed_checks(got), 8u);
}

TEST(MissedRuns, AProgramLoadedAgainCountsFromZero) {
  MissedRuns runs;
  runs.update({check_program(500)});
  // A reload (new programs, counters from 0): what they counted is all new.
  EXPECT_EQ(runs.update({check_program(7)}), (MissedCounts{{Key{"checks", "recursion"}, 7}}));
}

TEST(MissedRuns, ProgramsCountingTheSameWhatAreSummed) {
  MissedRuns runs;
  runs.update({check_program(1),
               {"huc_fentry_page", MissedWhat::subchecks, 1, {}},
               {"huc_fentry_heap", MissedWhat::subchecks, 1, {}}});
  const MissedCounts got = runs.update({check_program(1),
                                        {"huc_fentry_page", MissedWhat::subchecks, 4, {}},
                                        {"huc_fentry_heap", MissedWhat::subchecks, 3, {}}});
  EXPECT_EQ(got.at(Key{"subchecks", "recursion"}), 5u);
}

TEST(MissedRuns, SamplesHucprofCountedSkippedAreMissesOfTheirOwnReason) {
  MissedRuns runs;
  RawMisses sampler{"huc_sample", MissedWhat::samples, {}, {}};
  sampler.skipped = 3;
  EXPECT_EQ(runs.update({sampler}), (MissedCounts{{Key{"samples", "samples_skipped"}, 3}}));
  sampler.skipped = 10;
  EXPECT_EQ(runs.update({sampler}), (MissedCounts{{Key{"samples", "samples_skipped"}, 7}}));
  EXPECT_TRUE(missed_coverage({sampler}).at("samples").counted);
  // Not in the checks' count: a sample is no check.
  EXPECT_EQ(missed_checks(runs.update({sampler})), std::nullopt);
}

TEST(MissedRuns, EveryTargetProgramSaysWhatItsRunsCount) {
  EXPECT_EQ(missed_what_of(TargetProgram::Check), MissedWhat::checks);
  EXPECT_EQ(missed_what_of(TargetProgram::CheckReturn), MissedWhat::latency);
  for (TargetProgram p : {TargetProgram::Slab, TargetProgram::Vmalloc, TargetProgram::Heap,
                          TargetProgram::Page, TargetProgram::Stack, TargetProgram::Text}) {
    EXPECT_EQ(missed_what_of(p), MissedWhat::subchecks);
  }
}

RawMisses rescued_check(uint64_t skipped, uint64_t rescued) {
  RawMisses m = check_program(skipped);
  m.rescued = rescued;
  return m;
}

TEST(MissedRuns, RescuedChecksAreNoMisses) {
  MissedRuns runs;
  // Counted once a second drain agrees.
  EXPECT_EQ(runs.update({rescued_check(10, 7)}), (MissedCounts{{Key{"checks", "recursion"}, 0}}));
  EXPECT_EQ(runs.update({rescued_check(10, 7)}), (MissedCounts{{Key{"checks", "recursion"}, 3}}));
  EXPECT_EQ(runs.update({rescued_check(30, 25)}), (MissedCounts{{Key{"checks", "recursion"}, 0}}));
  EXPECT_EQ(runs.update({rescued_check(30, 25)}), (MissedCounts{{Key{"checks", "recursion"}, 2}}));
}

// A drain between a skip and its rescue sees a miss the next drain takes back: only what two
// drains in a row agree on is counted, so the counter neither runs ahead nor goes back.
TEST(MissedRuns, ASkipWhoseRescueIsUnderWayIsNotCountedAsMissed) {
  MissedRuns runs;
  runs.update({rescued_check(100, 100)});
  // 6 skips read, 2 of them not rescued yet: 2 look missed.
  EXPECT_EQ(runs.update({rescued_check(106, 104)}).at(Key{"checks", "recursion"}), 0u);
  // Rescued by now: nothing was missed.
  EXPECT_EQ(runs.update({rescued_check(106, 106)}).at(Key{"checks", "recursion"}), 0u);
  EXPECT_EQ(runs.update({rescued_check(106, 106)}).at(Key{"checks", "recursion"}), 0u);
  // One really missed: counted once two drains see it.
  EXPECT_EQ(runs.update({rescued_check(107, 106)}).at(Key{"checks", "recursion"}), 0u);
  EXPECT_EQ(runs.update({rescued_check(107, 106)}).at(Key{"checks", "recursion"}), 1u);
}

TEST(MissedCoverage, AWhatIsCountedOnlyWhenEveryProgramCountingItIs) {
  RawMisses kprobe_check{"huc_kprobe_check_direct",
                         MissedWhat::checks,
                         {},
                         {},
                         "the kernel counts a kprobe's skipped runs from 6.7"};
  RawMisses sample{"huc_sample", MissedWhat::samples, {}, {}, ""};
  RawMisses page{"huc_fentry_page", MissedWhat::subchecks, 0, {}};
  RawMisses stack{"huc_kprobe_stack", MissedWhat::subchecks, {}, {}, "not before 6.7"};
  const MissedCoverages got = missed_coverage({kprobe_check, sample, page, stack});
  EXPECT_FALSE(got.at("checks").counted);
  EXPECT_EQ(got.at("checks").uncounted, "the kernel counts a kprobe's skipped runs from 6.7");
  EXPECT_FALSE(got.at("samples").counted);
  EXPECT_EQ(got.at("samples").uncounted, "the kernel does not count them");
  EXPECT_FALSE(got.at("subchecks").counted);
  EXPECT_EQ(got.at("subchecks").uncounted, "not before 6.7");
  EXPECT_FALSE(got.contains("latency"));

  EXPECT_TRUE(missed_coverage({check_program(0)}).at("checks").counted);
}

TEST(MissedCoverage, SkippedSamplesAreCountedOnlyWhenTheirCountsWereRead) {
  EXPECT_TRUE(samples_coverage(true).counted);
  EXPECT_EQ(samples_coverage(true).uncounted, "");
  const MissedCoverage unread = samples_coverage(false);
  EXPECT_FALSE(unread.counted);
  EXPECT_EQ(unread.uncounted, kSamplesUncounted);
  // What doctor prints is what the metrics say of a drain that could not read them.
  RawMisses drained{"huc_sample", MissedWhat::samples, {}, {}, unread.uncounted};
  EXPECT_EQ(missed_coverage({drained}).at("samples").uncounted, kSamplesUncounted);
}

IntervalDeltas drained(uint64_t missed) {
  IntervalDeltas d;
  d.missed = {{Key{"checks", "recursion"}, missed}, {Key{"subchecks", "recursion"}, 1}};
  d.missed_coverage = {{"checks", {true, ""}}};
  return d;
}

TEST(MissedChecksInProfiles, EveryViewCarriesTheChecksOfItsDrains) {
  StackProfile header;
  header.probes = true;
  ProfileStore store(header, std::chrono::seconds(10), 0);
  store.add(drained(36), 1'000'000'000, 1.0);
  store.close_interval(1'000'000'000);
  store.add(drained(4), 2'000'000'000, 2.0);
  store.close_interval(2'000'000'000);
  const std::map<std::string, uint64_t> all{{"recursion", 40}};
  EXPECT_EQ(store.cumulative().missed_checks, all);
  EXPECT_EQ(store.window().missed_checks, all);
  EXPECT_EQ(store.last_interval().missed_checks,
            (std::map<std::string, uint64_t>{{"recursion", 4}}));
  StackProfile before = store.cumulative();
  store.add(drained(10), 3'000'000'000, 3.0);
  EXPECT_EQ(difference(store.cumulative(), before).missed_checks,
            (std::map<std::string, uint64_t>{{"recursion", 10}}));
  EXPECT_EQ(store.cumulative().missed_checks_uncounted, "");

  IntervalDeltas uncounted;
  uncounted.missed_coverage = {{"checks", {false, "not before 6.7"}}};
  store.add(uncounted, 4'000'000'000, 4.0);
  EXPECT_EQ(store.cumulative().missed_checks_uncounted, "not before 6.7");
}

}  // namespace
}  // namespace hucprof
