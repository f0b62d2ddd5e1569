#include <gtest/gtest.h>

#include "core/kernel/preemption.h"

namespace hucprof {
namespace {

// The preemption lines of Debian's trixie-backports 7.3.4+deb13 amd64 and rt-amd64 configs, and of
// bookworm's 6.12.118+deb12 amd64 (PREEMPT_DYNAMIC, built for voluntary preemption).
constexpr std::string_view kDebian73 =
    "CONFIG_PREEMPT_BUILD=y\nCONFIG_ARCH_HAS_PREEMPT_LAZY=y\n# CONFIG_PREEMPT is not set\n"
    "CONFIG_PREEMPT_LAZY=y\n# CONFIG_PREEMPT_RT is not set\nCONFIG_PREEMPT_COUNT=y\n"
    "CONFIG_PREEMPTION=y\nCONFIG_PREEMPT_DYNAMIC=y\nCONFIG_PREEMPT_RCU=y\n";
constexpr std::string_view kDebian73Rt =
    "CONFIG_PREEMPT_BUILD=y\nCONFIG_PREEMPT=y\n# CONFIG_PREEMPT_LAZY is not set\n"
    "CONFIG_PREEMPT_RT=y\nCONFIG_PREEMPT_COUNT=y\nCONFIG_PREEMPT_DYNAMIC=y\nCONFIG_PREEMPT_RCU=y\n";
constexpr std::string_view kDebian612 =
    "CONFIG_PREEMPT_BUILD=y\n# CONFIG_PREEMPT_NONE is not set\nCONFIG_PREEMPT_VOLUNTARY=y\n"
    "# CONFIG_PREEMPT is not set\n# CONFIG_PREEMPT_RT is not set\nCONFIG_PREEMPT_COUNT=y\n"
    "CONFIG_PREEMPTION=y\nCONFIG_PREEMPT_DYNAMIC=y\nCONFIG_PREEMPT_RCU=y\n";

TEST(Preemption, DebugfsSaysTheModelInForce) {
  const Preemption p = evaluate_preemption(kDebian612, "", "none voluntary (full) lazy\n");
  EXPECT_EQ(p.model, "full");
  EXPECT_TRUE(p.programs_preemptible);
  EXPECT_EQ(p.reason, "/sys/kernel/debug/sched/preempt");
  EXPECT_FALSE(
      evaluate_preemption(kDebian612, "", "none (voluntary) full lazy").programs_preemptible);
}

TEST(Preemption, WithoutDebugfsTheBootParameterThenTheBuildChoice) {
  EXPECT_EQ(evaluate_preemption(kDebian73, "ro quiet", std::nullopt).model, "lazy");
  EXPECT_TRUE(evaluate_preemption(kDebian73, "", std::nullopt).programs_preemptible);
  const Preemption voluntary = evaluate_preemption(kDebian612, "", std::nullopt);
  EXPECT_EQ(voluntary.model, "voluntary");
  EXPECT_FALSE(voluntary.programs_preemptible);
  const Preemption full = evaluate_preemption(kDebian612, "root=/dev/vda preempt=full", {});
  EXPECT_EQ(full.model, "full");
  EXPECT_TRUE(full.programs_preemptible);
  EXPECT_EQ(full.reason, "the boot parameter preempt=full");
  // A value the kernel does not know leaves the build choice in force.
  EXPECT_EQ(evaluate_preemption(kDebian612, "preempt=fast", {}).model, "voluntary");
}

TEST(Preemption, RtIsAlwaysPreemptible) {
  const Preemption rt = evaluate_preemption(kDebian73Rt, "preempt=none", "(full) lazy");
  EXPECT_EQ(rt.model, "rt");
  EXPECT_TRUE(rt.programs_preemptible);
}

TEST(Preemption, NonPreemptibleRcuKeepsTheRunInOnePiece) {
  const std::string config =
      "CONFIG_PREEMPT_LAZY=y\nCONFIG_PREEMPT_DYNAMIC=y\n# CONFIG_PREEMPT_RCU is not set\n";
  const Preemption p = evaluate_preemption(config, "", std::nullopt);
  EXPECT_EQ(p.model, "lazy");
  EXPECT_FALSE(p.programs_preemptible);
}

TEST(Preemption, UnknownIsTakenAsPreemptible) {
  const Preemption p = evaluate_preemption(std::nullopt, "", std::nullopt);
  EXPECT_EQ(p.model, "unknown");
  EXPECT_TRUE(p.programs_preemptible);
  // A non-dynamic kernel built without a choice this code knows.
  EXPECT_EQ(evaluate_preemption("CONFIG_SMP=y\n", "", "garbage").model, "unknown");
}

}  // namespace
}  // namespace hucprof
