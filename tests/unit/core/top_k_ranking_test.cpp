#include "core/drain/top_k_ranking.h"

#include <gtest/gtest.h>

namespace hucprof {
namespace {

TEST(TopKRanking, NamesTheCostliest) {
  TopKRanking ranking(2);
  ranking.add("a", 10);
  ranking.add("b", 5);
  ranking.add("c", 1);
  ranking.rerank();
  EXPECT_EQ(ranking.label("a"), "a");
  EXPECT_EQ(ranking.label("b"), "b");
  EXPECT_EQ(ranking.label("c"), "other");
  EXPECT_EQ(ranking.label("never_seen"), "other");
}

TEST(TopKRanking, CostIsCumulative) {
  TopKRanking ranking(1);
  ranking.add("a", 10);
  ranking.add("b", 6);
  ranking.rerank();
  EXPECT_EQ(ranking.label("a"), "a");
  ranking.add("b", 6);  // 12 > 10
  ranking.rerank();
  EXPECT_EQ(ranking.label("b"), "b");
  EXPECT_EQ(ranking.label("a"), "other");
}

TEST(TopKRanking, LabelsChangeOnlyOnRerank) {
  TopKRanking ranking(1);
  ranking.add("a", 1);
  EXPECT_EQ(ranking.label("a"), "other");
  ranking.rerank();
  EXPECT_EQ(ranking.label("a"), "a");
}

TEST(TopKRanking, TiesGoToTheFirstName) {
  TopKRanking ranking(1);
  ranking.add("zeta", 5);
  ranking.add("alpha", 5);
  ranking.rerank();
  EXPECT_EQ(ranking.label("alpha"), "alpha");
  EXPECT_EQ(ranking.label("zeta"), "other");
}

TEST(TopKRanking, ZeroCostCandidatesFillFreeSlots) {
  TopKRanking ranking(3);
  ranking.add("a", 0);
  ranking.rerank();
  EXPECT_EQ(ranking.label("a"), "a");
}

TEST(TopKRanking, OtherNeverCompetes) {
  TopKRanking ranking(1);
  ranking.add("other", 1000);
  ranking.add("a", 1);
  ranking.rerank();
  EXPECT_EQ(ranking.label("a"), "a");
}

TEST(TopKRanking, ZeroKNamesNothing) {
  TopKRanking ranking(0);
  ranking.add("a", 1000);
  ranking.rerank();
  EXPECT_EQ(ranking.label("a"), "other");
}

// A workload per CI job, for months: the candidates stay bounded, and the ones forgotten are the
// least costly, never one that could still enter the top-K soon.
TEST(TopKRanking, ForgetsTheLeastCostlyCandidatesPastTheBound) {
  TopKRanking ranking(1);
  ranking.add("big", 1000);
  ranking.add("second", 999);
  for (size_t i = 0; i < TopKRanking::kMaxCandidates; ++i) {
    ranking.add("job-" + std::to_string(i), i % 100);
  }
  ranking.rerank();
  EXPECT_EQ(ranking.candidates(), TopKRanking::kMaxCandidates / 2);
  EXPECT_EQ(ranking.label("big"), "big");
  ranking.add("second", 2);  // 1001: still known, so it overtakes
  ranking.rerank();
  EXPECT_EQ(ranking.label("second"), "second");
  EXPECT_EQ(ranking.label("big"), "other");
}

}  // namespace
}  // namespace hucprof
