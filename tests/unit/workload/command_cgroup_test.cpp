#include "workload/command_cgroup.h"

#include <gtest/gtest.h>

namespace hucprof {
namespace {

TEST(RecordCgroupOwner, IsThePidOfARecordersName) {
  EXPECT_EQ(record_cgroup_owner("hucprof-record-4242"), 4242);
  EXPECT_EQ(record_cgroup_owner("hucprof-record-"), std::nullopt);
  EXPECT_EQ(record_cgroup_owner("hucprof-record-42x"), std::nullopt);
  EXPECT_EQ(record_cgroup_owner("hucprof-record-042"), std::nullopt);
  EXPECT_EQ(record_cgroup_owner("hucprof-record--1"), std::nullopt);
  EXPECT_EQ(record_cgroup_owner("hucprof-record-99999999999999999999"), std::nullopt);
  EXPECT_EQ(record_cgroup_owner("hucprof-test-4242"), std::nullopt);
  EXPECT_EQ(record_cgroup_owner("system.slice"), std::nullopt);
}

// As the kernel writes /proc/PID/cgroup: one line per hierarchy, the unified one's id 0 with no
// controllers (cgroup v1 ones beside it on a hybrid host).
TEST(UnifiedCgroupPath, IsTheZeroLinesPath) {
  EXPECT_EQ(unified_cgroup_path("0::/user.slice/user-0.slice/session-3.scope\n"),
            "/user.slice/user-0.slice/session-3.scope");
  EXPECT_EQ(unified_cgroup_path("9:name=systemd:/\n4:memory:/process_api/49\n1:cpu:/\n0::/\n"),
            "/");
  EXPECT_EQ(unified_cgroup_path("12:pids:/x\n1:name=systemd:/x\n"), std::nullopt);
  EXPECT_EQ(unified_cgroup_path("0::/a b\n"), "/a b");
  EXPECT_EQ(unified_cgroup_path(""), std::nullopt);
}

}  // namespace
}  // namespace hucprof
