// What `record` follows reaches both BPF objects' rodata as huc_followed() reads it
// (bpf/usercopy_common.bpf.h): the skeletons' own rodata types, no kernel involved.
#include <gtest/gtest.h>

#include <type_traits>

#include "kernel_edge/rodata_ranges.h"
#include "probe.skel.h"
#include "sampler.skel.h"

namespace hucprof {
namespace {

template <typename Skeleton>
void expect_follow_written() {
  using Rodata = std::remove_pointer_t<decltype(Skeleton::rodata)>;
  Rodata everything{};
  set_rodata_follow(everything, FollowFilter{});
  EXPECT_EQ(everything.follow_cgroup_id, 0u);
  EXPECT_EQ(everything.nr_follow_tgids, 0u);
  EXPECT_FALSE(everything.follow_cpus);

  Rodata some{};
  set_rodata_follow(some, FollowFilter{.cgroup_id = 77, .tgids = {10, 20}, .cpus = {1, 64, 1023}});
  EXPECT_EQ(some.follow_cgroup_id, 77u);
  ASSERT_EQ(some.nr_follow_tgids, 2u);
  EXPECT_EQ(some.follow_tgids[0], 10u);
  EXPECT_EQ(some.follow_tgids[1], 20u);
  EXPECT_TRUE(some.follow_cpus);
  EXPECT_EQ(some.follow_cpu_mask[0], 1ULL << 1);
  EXPECT_EQ(some.follow_cpu_mask[1], 1ULL);
  EXPECT_EQ(some.follow_cpu_mask[15], 1ULL << 63);

  // More than the arrays hold never writes past them (the planner refuses such lists first).
  Rodata over{};
  FollowFilter many;
  for (int i = 1; i <= 100; ++i) many.tgids.push_back(i);
  many.cpus = {2048};
  set_rodata_follow(over, many);
  EXPECT_EQ(over.nr_follow_tgids, static_cast<unsigned>(HUC_MAX_FOLLOW_TGIDS));
  EXPECT_TRUE(over.follow_cpus);  // a CPU past the mask: no CPU followed, not every one
  for (auto word : over.follow_cpu_mask) EXPECT_EQ(word, 0u);
}

TEST(FollowRodata, SamplerGetsWhatIsFollowed) { expect_follow_written<sampler_bpf>(); }
TEST(FollowRodata, ProbeGetsWhatIsFollowed) { expect_follow_written<probe_bpf>(); }

}  // namespace
}  // namespace hucprof
