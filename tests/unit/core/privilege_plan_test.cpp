#include "core/kernel/privilege_plan.h"

#include <gtest/gtest.h>
#include <linux/capability.h>

namespace hucprof {
namespace {

// Root started by hand: every capability in every set but ambient (as /proc/self/status shows
// for a root shell: CapInh 0, CapPrm = CapEff = CapBnd = all).
CapabilitySets root_by_hand() {
  const CapabilityMask all = capability_bit(CAP_LAST_CAP + 1) - 1;
  return {all, all, 0, all, 0};
}

// deploy/hucprof.service: a dynamic uid with ambient CAP_BPF CAP_PERFMON CAP_SYSLOG and the same
// bounding set; no CAP_SETPCAP.
CapabilitySets under_the_unit() {
  const CapabilityMask three =
      capability_bit(CAP_BPF) | capability_bit(CAP_PERFMON) | capability_bit(CAP_SYSLOG);
  return {three, three, three, three, three};
}

TEST(PrivilegePlan, RootByHandKeepsOnlySyslogEverywhere) {
  const PrivilegePlan plan = plan_privileges(root_by_hand(), default_capability_keep());
  EXPECT_FALSE(plan.unchanged);
  EXPECT_EQ(plan.keep, capability_bit(CAP_SYSLOG));
  EXPECT_EQ(plan.bounding_drop, root_by_hand().bounding & ~capability_bit(CAP_SYSLOG));
  EXPECT_EQ(plan.bounding_stuck, 0u);
  EXPECT_EQ(plan.missing, 0u);
}

TEST(PrivilegePlan, UnderTheUnitTheBoundingSetCannotShrink) {
  const PrivilegePlan plan = plan_privileges(under_the_unit(), default_capability_keep());
  EXPECT_EQ(plan.keep, capability_bit(CAP_SYSLOG));
  EXPECT_EQ(plan.bounding_drop, 0u);  // no CAP_SETPCAP
  EXPECT_EQ(plan.bounding_stuck, capability_bit(CAP_BPF) | capability_bit(CAP_PERFMON));
}

TEST(PrivilegePlan, KeepingWhatIsNotHeldKeepsNothingAndSaysSo) {
  CapabilityKeep keep{false, capability_bit(CAP_SYS_ADMIN) | capability_bit(CAP_SYSLOG)};
  const PrivilegePlan plan = plan_privileges(under_the_unit(), keep);
  EXPECT_EQ(plan.keep, capability_bit(CAP_SYSLOG));
  EXPECT_EQ(plan.missing, capability_bit(CAP_SYS_ADMIN));
}

TEST(PrivilegePlan, AllChangesNothing) {
  const PrivilegePlan plan = plan_privileges(under_the_unit(), CapabilityKeep{true, 0});
  EXPECT_TRUE(plan.unchanged);
  EXPECT_EQ(plan.keep, under_the_unit().permitted);
  EXPECT_EQ(plan.bounding_drop | plan.bounding_stuck, 0u);
}

TEST(PrivilegePlan, NoneDropsEverything) {
  const PrivilegePlan plan = plan_privileges(root_by_hand(), CapabilityKeep{false, 0});
  EXPECT_EQ(plan.keep, 0u);
  EXPECT_EQ(plan.bounding_drop, root_by_hand().bounding);
}

TEST(PrivilegePlan, MapAccessKeepsCapBpfWhereHeld) {
  const CapabilityKeep keep =
      with_map_access(default_capability_keep(), under_the_unit().permitted);
  const PrivilegePlan plan = plan_privileges(under_the_unit(), keep);
  EXPECT_EQ(plan.keep, capability_bit(CAP_SYSLOG) | capability_bit(CAP_BPF));
  EXPECT_EQ(plan.bounding_stuck, capability_bit(CAP_PERFMON));
}

TEST(PrivilegePlan, MapAccessWithoutCapBpfKeepsSysAdmin) {
  // A root whose kernel predates CAP_BPF (5.8): only CAP_SYS_ADMIN lets bpf() through.
  CapabilitySets old_root = root_by_hand();
  old_root.permitted &= ~capability_bit(CAP_BPF);
  const PrivilegePlan plan =
      plan_privileges(old_root, with_map_access(default_capability_keep(), old_root.permitted));
  EXPECT_EQ(plan.keep, capability_bit(CAP_SYSLOG) | capability_bit(CAP_SYS_ADMIN));
}

TEST(PrivilegePlan, MapAccessLeavesAllAsAll) {
  const CapabilityKeep keep = with_map_access(CapabilityKeep{true, 0}, root_by_hand().permitted);
  EXPECT_TRUE(keep.all);
  EXPECT_TRUE(plan_privileges(root_by_hand(), keep).unchanged);
}

}  // namespace
}  // namespace hucprof
