#include "workload/cgroup_index.h"

#include <gtest/gtest.h>

#include <sys/resource.h>

#include <cerrno>
#include <climits>
#include <fstream>
#include <string>
#include <vector>

#include "temp_tree.h"

namespace hucprof {
namespace {

using namespace std::chrono_literals;
using test::TempTree;

// A clock the test moves by hand.
struct FakeClock {
  std::chrono::steady_clock::time_point now{};
  CgroupIndex::Clock clock() {
    return [this] { return now; };
  }
};

// What on_gone heard, in order.
struct GoneLog : std::vector<std::pair<uint64_t, std::string>> {
  CgroupIndex::Gone hear() {
    return [this](uint64_t id, const std::string& path) { emplace_back(id, path); };
  }
};

TEST(CgroupIndex, MapsEachDirectorysInodeToItsPathBelowTheRoot) {
  TempTree tree;
  ASSERT_FALSE(tree.root().empty());
  const uint64_t nginx = tree.mkdirs("/system.slice/nginx.service");
  const uint64_t slice = tree.inode("/system.slice");
  const uint64_t pod = tree.mkdirs("/kubepods/besteffort/podc4a73744/abc");
  std::ofstream(tree.root() + "/system.slice/cgroup.procs") << "1\n";  // files are no cgroups

  FakeClock time;
  CgroupIndex index({.root = tree.root(), .clock = time.clock()});
  EXPECT_EQ(index.path_of(tree.inode("")), "/");
  EXPECT_EQ(index.path_of(nginx), "/system.slice/nginx.service");
  EXPECT_EQ(index.path_of(slice), "/system.slice");
  EXPECT_EQ(index.path_of(pod), "/kubepods/besteffort/podc4a73744/abc");
  EXPECT_EQ(index.path_of(tree.inode("/system.slice/cgroup.procs")), std::nullopt);
  EXPECT_EQ(index.stats().entries,
            7u);  // root, system.slice, nginx, kubepods, besteffort, pod, abc
  EXPECT_EQ(index.stats().last_error, "");
}

TEST(CgroupIndex, AMissWalksAgainAtMostOncePerInterval) {
  TempTree tree;
  tree.mkdirs("/system.slice");
  FakeClock time;
  CgroupIndex index({.root = tree.root(), .clock = time.clock()});
  index.refresh();
  EXPECT_EQ(index.stats().walks, 1u);

  // A cgroup made right after the walk is not found until a second has passed...
  const uint64_t fresh = tree.mkdirs("/system.slice/fresh.service");
  time.now += 500ms;
  EXPECT_EQ(index.path_of(fresh), std::nullopt);
  EXPECT_EQ(index.path_of(fresh), std::nullopt);
  EXPECT_EQ(index.stats().walks, 1u);
  EXPECT_EQ(index.stats().throttled, 2u);
  // ...and then by the next miss, with one walk.
  time.now += 500ms;
  EXPECT_EQ(index.path_of(fresh), "/system.slice/fresh.service");
  EXPECT_EQ(index.stats().walks, 2u);
  // Hits never walk; an id that exists nowhere walks once per interval.
  time.now += 5s;
  EXPECT_EQ(index.path_of(fresh), "/system.slice/fresh.service");
  EXPECT_EQ(index.stats().walks, 2u);
  EXPECT_EQ(index.path_of(~uint64_t{0}), std::nullopt);
  EXPECT_EQ(index.path_of(~uint64_t{0}), std::nullopt);
  EXPECT_EQ(index.stats().walks, 3u);
  EXPECT_EQ(index.stats().misses, 4u);
}

TEST(CgroupIndex, ASlowWalkWaitsAHundredTimesItsDurationBeforeTheNext) {
  TempTree tree;
  tree.mkdirs("/system.slice");
  // Every reading of this clock is 40 ms after the last: a walk "takes" 40 ms.
  std::chrono::steady_clock::time_point now{};
  CgroupIndex index({.root = tree.root(), .clock = [&] { return now += 40ms; }});
  index.refresh();
  EXPECT_EQ(index.path_of(~uint64_t{0}), std::nullopt);  // 40 ms later: no walk
  now += 3s;
  EXPECT_EQ(index.path_of(~uint64_t{0}), std::nullopt);  // 3 s < 100 x 40 ms: still none
  EXPECT_EQ(index.stats().walks, 1u);
  now += 1s;
  EXPECT_EQ(index.path_of(~uint64_t{0}), std::nullopt);  // past 4 s: walks
  EXPECT_EQ(index.stats().walks, 2u);
}

TEST(CgroupIndex, RemovedCgroupsLeaveTheIndexOnTheNextWalk) {
  TempTree tree;
  const uint64_t gone = tree.mkdirs("/gone.scope");
  FakeClock time;
  CgroupIndex index({.root = tree.root(), .clock = time.clock()});
  EXPECT_EQ(index.path_of(gone), "/gone.scope");
  std::filesystem::remove(tree.root() + "/gone.scope");
  index.refresh();
  EXPECT_EQ(index.stats().entries, 1u);
}

TEST(CgroupIndex, StopsAtTheCapAndCountsIt) {
  TempTree tree;
  for (int i = 0; i < 20; ++i) tree.mkdirs("/s" + std::to_string(i) + "/leaf");
  FakeClock time;
  CgroupIndex index({.root = tree.root(), .max_entries = 10, .clock = time.clock()});
  index.refresh();
  EXPECT_EQ(index.stats().entries, 10u);
  EXPECT_EQ(index.stats().capped_walks, 1u);
  // The root is always in, whatever was dropped.
  EXPECT_EQ(index.path_of(tree.inode("")), "/");
}

TEST(CgroupIndex, DoesNotFollowSymlinks) {
  TempTree tree;
  const uint64_t real = tree.mkdirs("/real.service");
  std::filesystem::create_directory_symlink(tree.root() + "/real.service",
                                            tree.root() + "/link.service");
  FakeClock time;
  CgroupIndex index({.root = tree.root(), .clock = time.clock()});
  EXPECT_EQ(index.path_of(real), "/real.service");
  EXPECT_EQ(index.stats().entries, 2u);
}

// A delegated subtree nested past PATH_MAX: no path to it can be opened or stat'ed, yet its
// cgroups are found, by the path below the root that the kernel would name them by.
TEST(CgroupIndex, FindsCgroupsWhosePathIsLongerThanPathMax) {
  TempTree tree;
  ASSERT_FALSE(tree.root().empty());
  std::vector<std::string> names;
  std::string expected;
  for (int level = 0; level < 40; ++level) {
    names.push_back("level" + std::to_string(level) + "-" + std::string(200, 'x'));
    expected += "/" + names.back();
  }
  ASSERT_GT(expected.size(), static_cast<size_t>(PATH_MAX));
  tree.mkdirs("/tenant.slice");
  const uint64_t deepest = tree.mkdir_chain("/tenant.slice", names);
  ASSERT_NE(deepest, 0u);
  struct stat st {};
  ASSERT_NE(::stat((tree.root() + "/tenant.slice" + expected).c_str(), &st), 0);
  EXPECT_EQ(errno, ENAMETOOLONG) << "the path itself cannot be used";

  // Whatever the depth, the walk holds a few descriptors at a time, not one per level: here it
  // may open 4 more than are open now.
  size_t open_now = 0;
  for ([[maybe_unused]] const auto& fd : std::filesystem::directory_iterator("/proc/self/fd")) {
    ++open_now;
  }
  rlimit saved{};
  ASSERT_EQ(::getrlimit(RLIMIT_NOFILE, &saved), 0);
  rlimit tight = saved;
  tight.rlim_cur = open_now + 4;
  ASSERT_EQ(::setrlimit(RLIMIT_NOFILE, &tight), 0);
  FakeClock time;
  CgroupIndex index({.root = tree.root(), .clock = time.clock()});
  index.refresh();
  ::setrlimit(RLIMIT_NOFILE, &saved);

  EXPECT_EQ(index.path_of(deepest), "/tenant.slice" + expected);
  EXPECT_EQ(index.stats().entries, 42u);  // root, tenant.slice, 40 levels
  EXPECT_EQ(index.stats().capped_walks, 0u);
}

TEST(CgroupIndex, CgroupsBelowTheNamedDepthAreNamedAsTheirAncestorThere) {
  TempTree tree;
  const uint64_t third = tree.mkdirs("/a/b/c");
  const uint64_t fifth = tree.mkdirs("/a/b/c/d/e");
  const uint64_t sibling = tree.mkdirs("/a/b/c/f");
  FakeClock time;
  CgroupIndex index({.root = tree.root(), .max_named_depth = 3, .clock = time.clock()});
  EXPECT_EQ(index.path_of(third), "/a/b/c");
  EXPECT_EQ(index.path_of(fifth), "/a/b/c");
  EXPECT_EQ(index.path_of(sibling), "/a/b/c");
  EXPECT_EQ(index.path_of(tree.inode("/a/b/c/d")), "/a/b/c");
  EXPECT_EQ(index.stats().entries, 7u);  // every one of them is indexed, and counts
}

// The kernel's reports (bpf/cgroup_names.bpf.c) between walks: a cgroup made is indexed at
// once, without a walk; one removed leaves with its path, which on_gone hears first.
TEST(CgroupIndex, ReportedCgroupsAreIndexedWithoutAWalkAndLeaveWithTheirPath) {
  TempTree tree;
  const uint64_t slice = tree.mkdirs("/system.slice");
  FakeClock time;
  GoneLog gone;
  CgroupIndex index({.root = tree.root(), .clock = time.clock(), .on_gone = gone.hear()});
  index.refresh();
  // Ids the tree does not hold: the index believes the report, as it believes the kernel.
  index.made(1001, slice, "run-u7.service");
  index.made(1002, 1001, "inner");
  index.made(1003, 99999, "orphan");  // below a parent it never saw: left to a walk
  EXPECT_EQ(index.path_of(1001), "/system.slice/run-u7.service");
  EXPECT_EQ(index.path_of(1002), "/system.slice/run-u7.service/inner");
  EXPECT_EQ(index.stats().walks, 1u) << "a reported cgroup is found without walking";
  EXPECT_EQ(index.stats().learned, 2u);

  index.removed(1002);
  index.removed(1001);
  index.removed(1001);  // twice: heard once
  ASSERT_EQ(gone.size(), 2u);
  EXPECT_EQ(gone[0],
            std::make_pair(uint64_t{1002}, std::string("/system.slice/run-u7.service/inner")));
  EXPECT_EQ(gone[1], std::make_pair(uint64_t{1001}, std::string("/system.slice/run-u7.service")));
  time.now += 2s;
  EXPECT_EQ(index.path_of(1001), std::nullopt) << "gone from the index (a walk does not find it)";
}

TEST(CgroupIndex, AWalkThatNoLongerFindsACgroupReportsItGoneWithItsPath) {
  TempTree tree;
  const uint64_t job = tree.mkdirs("/ci.slice/job-1.scope");
  FakeClock time;
  GoneLog gone;
  CgroupIndex index({.root = tree.root(), .clock = time.clock(), .on_gone = gone.hear()});
  index.refresh();
  std::filesystem::remove(tree.root() + "/ci.slice/job-1.scope");
  index.refresh();
  ASSERT_EQ(gone.size(), 1u);
  EXPECT_EQ(gone[0], std::make_pair(job, std::string("/ci.slice/job-1.scope")));
}

TEST(CgroupIndex, ReportedCgroupsBelowTheNamedDepthAreNamedAsTheWalkNamesThem) {
  TempTree tree;
  const uint64_t c = tree.mkdirs("/a/b/c");
  FakeClock time;
  CgroupIndex index({.root = tree.root(), .max_named_depth = 3, .clock = time.clock()});
  index.refresh();
  index.made(501, c, "d");
  index.made(502, 501, "e");
  EXPECT_EQ(index.path_of(501), "/a/b/c");
  EXPECT_EQ(index.path_of(502), "/a/b/c");
  EXPECT_EQ(index.stats().walks, 1u);
}

TEST(CgroupIndex, AReportedCgroupWhoseParentLeftIsNoPartialPath) {
  TempTree tree;
  const uint64_t slice = tree.mkdirs("/x.slice");
  FakeClock time;
  CgroupIndex index({.root = tree.root(), .clock = time.clock()});
  index.refresh();
  index.made(701, slice, "y.scope");
  index.made(702, 701, "z");
  index.removed(701);  // its child's removal was never reported (a full ring)
  EXPECT_EQ(index.path_of(702), std::nullopt) << "not \"/z\"";
}

TEST(CgroupIndex, AnUnreadableRootIsAnErrorInWords) {
  FakeClock time;
  CgroupIndex index({.root = "/nonexistent/huc-cgroup-root", .clock = time.clock()});
  EXPECT_EQ(index.path_of(1), std::nullopt);
  EXPECT_EQ(index.stats().last_error, "/nonexistent/huc-cgroup-root: No such file or directory");
  EXPECT_EQ(index.stats().entries, 0u);
}

TEST(UnifiedRoot, APlainDirectoryIsNoCgroup2Hierarchy) {
  TempTree tree;
  tree.mkdirs("/unified");
  const auto root = find_unified_root(tree.root());
  ASSERT_FALSE(root.ok()) << root.value();
  EXPECT_NE(root.error().text.find("no cgroup v2 hierarchy at " + tree.root()), std::string::npos)
      << root.error().text;
}

}  // namespace
}  // namespace hucprof
