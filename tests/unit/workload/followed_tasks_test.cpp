#include "workload/followed_tasks.h"

#include <gtest/gtest.h>

#include <fstream>

#include "temp_tree.h"

namespace hucprof {
namespace {

TEST(ResolveCgroup, AUnitIsFoundWhereSystemdNestedIt) {
  test::TempTree tree;
  ASSERT_FALSE(tree.root().empty());
  const uint64_t id = tree.mkdirs("/system.slice/nginx.service");
  tree.mkdirs("/user.slice/user-1000.slice/user@1000.service/app.slice/other.service");
  auto found = resolve_cgroup(tree.root(), CgroupName{"", "nginx.service"});
  ASSERT_TRUE(found.ok()) << found.error().text;
  EXPECT_EQ(found.value().path, "/system.slice/nginx.service");
  EXPECT_EQ(found.value().id, id);
  auto nested = resolve_cgroup(tree.root(), CgroupName{"", "other.service"});
  ASSERT_TRUE(nested.ok()) << nested.error().text;
  EXPECT_EQ(nested.value().path,
            "/user.slice/user-1000.slice/user@1000.service/app.slice/other.service");
}

TEST(ResolveCgroup, MissingOrAmbiguousIsAnError) {
  test::TempTree tree;
  tree.mkdirs("/a.slice/x.service");
  tree.mkdirs("/b.slice/x.service");
  auto twice = resolve_cgroup(tree.root(), CgroupName{"", "x.service"});
  ASSERT_FALSE(twice.ok());
  EXPECT_NE(twice.error().text.find("2 cgroups of that name"), std::string::npos);
  EXPECT_EQ(twice.error().exit_code, kExitBadInput);
  EXPECT_FALSE(resolve_cgroup(tree.root(), CgroupName{"", "y.service"}).ok());
  EXPECT_FALSE(resolve_cgroup(tree.root(), CgroupName{"/nope", ""}).ok());
}

TEST(ResolveCgroup, PathsAreBelowTheRoot) {
  test::TempTree tree;
  const uint64_t id = tree.mkdirs("/a.slice/x.service");
  auto relative = resolve_cgroup(tree.root(), CgroupName{"/a.slice/x.service", ""});
  ASSERT_TRUE(relative.ok());
  EXPECT_EQ(relative.value().id, id);
  auto absolute =
      resolve_cgroup(tree.root(), CgroupName{tree.root() + "/a.slice/x.service", "", true});
  ASSERT_TRUE(absolute.ok());
  EXPECT_EQ(absolute.value().path, "/a.slice/x.service");
  EXPECT_EQ(resolve_cgroup(tree.root(), CgroupName{tree.root(), "", true}).value().path, "/");
  EXPECT_FALSE(resolve_cgroup(tree.root(), CgroupName{"/sys/fs/cgroup/other", "", true}).ok());
}

TEST(CheckProcesses, AThreadOrAMissingPidIsNamed) {
  test::TempTree proc;
  proc.mkdirs("/10");
  proc.mkdirs("/11");
  std::ofstream(proc.root() + "/10/status") << "Name:\tx\nUmask:\t0022\nState:\tR\nTgid:\t10\n";
  std::ofstream(proc.root() + "/11/status") << "Name:\tx\nUmask:\t0022\nState:\tR\nTgid:\t10\n";
  EXPECT_TRUE(check_processes({10}, proc.root()).ok());
  auto thread = check_processes({10, 11}, proc.root());
  ASSERT_FALSE(thread.ok());
  EXPECT_EQ(thread.error().text, "-p 11: a thread of process 10 (-p takes the ids of processes)");
  auto missing = check_processes({12}, proc.root());
  ASSERT_FALSE(missing.ok());
  EXPECT_EQ(missing.error().text, "-p 12: no process runs with that id");
}

}  // namespace
}  // namespace hucprof
