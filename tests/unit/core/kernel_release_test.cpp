#include "core/kernel/kernel_release.h"

#include <gtest/gtest.h>

namespace hucprof {
namespace {

TEST(KernelRelease, VersionOfDebianAndOtherReleases) {
  for (auto [release, major, minor] : {std::tuple{"6.1.0-57-amd64", 6, 1},
                                       {"6.12.117+deb13-amd64", 6, 12},
                                       {"7.3.4+deb13-amd64", 7, 3},
                                       {"6.18.44-fc-v1045", 6, 18},
                                       {"5.15.0-1057-aws", 5, 15}}) {
    auto version = parse_kernel_version(release);
    ASSERT_TRUE(version) << release;
    EXPECT_EQ(version->major, major) << release;
    EXPECT_EQ(version->minor, minor) << release;
  }
  for (auto bad : {"", "linux", "6", "6.", ".12", "x6.12"}) {
    EXPECT_FALSE(parse_kernel_version(bad)) << bad;
  }
  EXPECT_TRUE(parse_kernel_version("6.15.0")->at_least(6, 15));
  EXPECT_TRUE(parse_kernel_version("7.0.1")->at_least(6, 15));
  EXPECT_FALSE(parse_kernel_version("6.14.9")->at_least(6, 15));
}

TEST(KernelRelease, ConfigPathsCoverTheOldAndTheSplitDebianLayout) {
  EXPECT_EQ(kernel_config_paths("7.3.4+deb13-amd64"),
            (std::vector<std::string>{"/boot/config-7.3.4+deb13-amd64",
                                      "/usr/lib/modules/7.3.4+deb13-amd64/config",
                                      "/lib/modules/7.3.4+deb13-amd64/config"}));
}

TEST(KernelRelease, ChecksOffBehaviourFollowsTheStaticKeyMoveIn615) {
  EXPECT_NE(checks_off_behaviour("6.12.117+deb13-amd64").find("still enters __check_object_size"),
            std::string::npos);
  EXPECT_NE(checks_off_behaviour("6.14.0").find("still enters"), std::string::npos);
  EXPECT_NE(checks_off_behaviour("6.15.0").find("does not enter __check_object_size"),
            std::string::npos);
  EXPECT_NE(checks_off_behaviour("7.3.4+deb13-amd64").find("Linux 7.3 does not enter"),
            std::string::npos);
  EXPECT_NE(checks_off_behaviour("weird").find("does not say which"), std::string::npos);
}

}  // namespace
}  // namespace hucprof
