#include "export/views/folded_stacks.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>

#include "core/symbols/stack_interner.h"
#include "fixture_profile.h"
#include "text_lines.h"

namespace hucprof {
namespace {

using ::testing::AllOf;
using ::testing::Contains;
using ::testing::ElementsAre;
using ::testing::UnorderedElementsAre;

// fixture_profile.h: 7 samples __check_object_size <- nft_do_chain [nf_tables] <- udp_recvmsg,
// 2 samples _raw_spin_lock <- find_vmap_area <- __check_object_size.cold <- netlink_recvmsg, of
// 1000 kernel and 400 user busy samples.
TEST(FoldedStacks, OneLinePerStackRootFirstWithTheRestOfBusyCpu) {
  StackInterner interner;
  const std::string text = folded_stacks(fixture_profile(interner));
  EXPECT_THAT(text_lines(text),
              UnorderedElementsAre("udp_recvmsg;nft_do_chain;__check_object_size 7",
                                   "netlink_recvmsg;__check_object_size.cold;find_vmap_area;"
                                   "_raw_spin_lock 2",
                                   "[not in the checks];[other kernel CPU] 991",
                                   "[not in the checks];[user CPU] 400"));
}

TEST(FoldedStacks, InterruptsInChecksAreTheirOwnStack) {
  StackInterner interner;
  StackProfile p = fixture_profile(interner);
  p.excluded_samples["interrupt"] = 11;
  EXPECT_THAT(text_lines(folded_stacks(p)),
              AllOf(Contains("[not in the checks];[other kernel CPU] 980"),
                    Contains("[not in the checks];[other kernel CPU];[interrupt in a check] 11")));
}

TEST(FoldedStacks, ProbesOnlyCountCalls) {
  StackInterner interner;
  StackProfile p = fixture_profile(interner);
  p.sampling = false;
  EXPECT_THAT(text_lines(folded_stacks(p)), ElementsAre("udp_recvmsg;__check_object_size 1000"));
}

// The udp_recvmsg frame holds copy_linear_skb, copy_to_iter, check_copy_size and
// check_object_size inlined (outermost first), called from sock_recvmsg.
TEST(FoldedStacks, InlinedCallsAreMarked) {
  StackInterner interner;
  const std::vector<std::string> lines =
      text_lines(folded_stacks(fixture_profile_with_source(interner)));
  ASSERT_FALSE(lines.empty());
  EXPECT_THAT(lines[0], ::testing::StartsWith("sock_recvmsg;udp_recvmsg;copy_linear_skb_[i];"
                                              "copy_to_iter_[i];"));
  EXPECT_THAT(lines[0], ::testing::EndsWith(";__check_object_size 7"));
}

TEST(FoldedStacks, NamesCannotSplitAFrameOrALine) {
  StackInterner interner;
  StackProfile p;
  p.sampling = true;
  ProfileSample s{interner.stack({interner.frame({"evil;name\nx 99", "", 0, 0}),
                                  interner.frame({"caller", "", 0, 0})}),
                  make_labels({"caller", "read", "", ""}),
                  {}};
  s.values[kSamples] = 3;
  p.samples = {s};
  p.sampled_by_context["kernel"] = 3;
  const std::vector<std::string> lines = text_lines(folded_stacks(p));
  ASSERT_EQ(lines.size(), 1u);
  EXPECT_THAT(lines[0], ::testing::StartsWith("caller;evil:name"));
  EXPECT_THAT(lines[0], ::testing::EndsWith(" 3"));
  EXPECT_EQ(std::count(lines[0].begin(), lines[0].end(), ';'), 1);
}

}  // namespace
}  // namespace hucprof
