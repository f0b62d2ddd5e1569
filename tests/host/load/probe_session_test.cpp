// ProbeSession carries out a plan the kernel then refuses, on this kernel (which refuses fentry
// with EPERM and has no kprobes): every refusal comes back as words naming the target, nothing
// crashes, and what can still load does. Plans are written by hand here: the real planner would
// not choose fentry on this kernel (its feature probe says no), which is the point.
#include <unistd.h>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "kernel_edge/kernel_facts.h"
#include "kernel_edge/probe_session.h"

namespace hucprof {
namespace {

using ::testing::HasSubstr;

class ProbeSessionRefused : public ::testing::Test {
 protected:
  void SetUp() override {
    if (geteuid() != 0) GTEST_SKIP() << "needs root to load BPF programs";
    if (access("/sys/kernel/btf/vmlinux", R_OK) != 0) GTEST_SKIP() << "kernel has no BTF";
    if (fentry_attach_error(load_kernel_btf().get(), "__check_object_size").empty()) {
      GTEST_SKIP() << "this kernel takes fentry programs; the refusal path needs one that does not";
    }
  }
};

AttachPlan plan_of(std::initializer_list<std::pair<ProbeTarget, Flavour>> targets) {
  AttachPlan plan;
  plan.probes = true;
  for (const auto& [target, flavour] : targets) {
    plan.targets.push_back(
        {target, std::string(target.symbol), "test", flavour, "test", Flavour::None, ""});
  }
  plan.maps = {1024, 1024, 256, false, false, "test"};
  return plan;
}

TEST_F(ProbeSessionRefused, RefusedCheckProgramIsNamedAndNothingAttaches) {
  const auto started = ProbeSession::start(plan_of({{probe_targets()[0], Flavour::Fentry}}));
  EXPECT_EQ(started.session, nullptr);
  EXPECT_THAT(started.error, HasSubstr("the kernel refused to load it"));
  ASSERT_EQ(started.statuses.size(), 1u);
  EXPECT_EQ(started.statuses[0].target, "__check_object_size");
  EXPECT_FALSE(started.statuses[0].attached);
  EXPECT_THAT(started.statuses[0].reason, HasSubstr("the kernel refused to load it"));
}

TEST_F(ProbeSessionRefused, RefusedSubcheckCostsOnlyItself) {
  // The check as kprobe loads (the program type exists without kprobes) and then cannot attach;
  // the sub-check as fentry is refused at load and must be the one named for that.
  const ProbeTarget vmalloc = probe_targets()[2];
  ASSERT_EQ(vmalloc.symbol, "find_vmap_area");
  const auto started = ProbeSession::start(
      plan_of({{probe_targets()[0], Flavour::Kprobe}, {vmalloc, Flavour::Fentry}}));
  EXPECT_EQ(started.error, "");  // the object loaded, without the refused program
  ASSERT_EQ(started.statuses.size(), 2u);
  EXPECT_EQ(started.statuses[1].target, "find_vmap_area");
  EXPECT_THAT(started.statuses[1].reason, HasSubstr("the kernel refused to load it"));
  EXPECT_EQ(started.statuses[0].target, "__check_object_size");
  if (!started.statuses[0].attached) {
    EXPECT_THAT(started.statuses[0].reason, HasSubstr("kprobe attach failed"));
    EXPECT_EQ(started.session, nullptr);
  }
}

TEST_F(ProbeSessionRefused, ARefusedCheckWalksEverySubcheckLevelDownBeforeGivingUp) {
  // Classified, then probed, then not counted: the check's fentry program is refused at each
  // level, and the session says so with the kernel's reason (never a crash, never a silent
  // loss); each level's reason is the plan's as loaded.
  AttachPlan plan = plan_of({{probe_targets()[0], Flavour::Fentry}});
  TargetPlan vmalloc{probe_targets()[2], "find_vmap_area", "test",         Flavour::None,
                     kClassifiedReason,  Flavour::Kprobe,  "kprobe (test)"};
  plan.targets.push_back(vmalloc);
  plan.subchecks = SubcheckMethod::Classified;
  plan.slab_marker = read_slab_marker(load_kernel_btf().get());
  const auto loaded = ProbeSession::load(plan);
  EXPECT_EQ(loaded.session, nullptr);
  EXPECT_THAT(loaded.error, HasSubstr("cannot load the probe BPF programs"));
  EXPECT_EQ(loaded.plan.subchecks, SubcheckMethod::NotCounted);
  EXPECT_THAT(loaded.plan.subchecks_reason, HasSubstr("sub-checks not counted"));
  EXPECT_FALSE(loaded.plan.targets[1].attaches());
  const auto statuses = ProbeSession::statuses_of(loaded);
  ASSERT_EQ(statuses.size(), 2u);
  EXPECT_FALSE(statuses[0].attached);
  EXPECT_THAT(statuses[0].reason, HasSubstr("the kernel refused to load it"));
}

}  // namespace
}  // namespace hucprof
