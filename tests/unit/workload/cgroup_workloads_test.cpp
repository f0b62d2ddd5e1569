// cgroup id → workload, from a cgroup tree and kubelet's pod log directories of the test's own.
#include "workload/cgroup_workloads.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <string>
#include <vector>

#include "temp_tree.h"

namespace hucprof {
namespace {

using namespace std::chrono_literals;
using test::TempTree;

constexpr const char* kUid = "c4a73744-8e75-4877-b18b-1fcea4d91af7";

struct Node {
  TempTree cgroups, logs;
  std::chrono::steady_clock::time_point now{};
  CgroupWorkloads workloads() {
    CgroupWorkloads::Options o;
    o.cgroup_root = cgroups.root();
    o.pod_logs_dir = logs.root();
    o.clock = [this] { return now; };
    return CgroupWorkloads(std::move(o));
  }
};

TEST(CgroupWorkloads, NamesUnitsContainersAndTheRootByTheirCgroups) {
  Node node;
  const uint64_t nginx = node.cgroups.mkdirs("/system.slice/nginx.service");
  const uint64_t docker = node.cgroups.mkdirs(
      "/system.slice/"
      "docker-0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef.scope");
  CgroupWorkloads w = node.workloads();
  EXPECT_EQ(w.workload_of(nginx).name, "nginx.service");
  EXPECT_EQ(w.workload_of(nginx).kind, Workload::Kind::Unit);
  EXPECT_EQ(w.workload_of(docker).name, "docker:0123456789ab");
  EXPECT_EQ(w.workload_of(node.cgroups.inode("")).name, "[kernel threads (root cgroup)]");
  EXPECT_EQ(&w.workload_of(12345), &kUnknownWorkload) << "no cgroup has this id";
}

TEST(CgroupWorkloads, APodIsNamedOnceItsLogDirectoryAppears) {
  Node node;
  const uint64_t pod = node.cgroups.mkdirs(std::string("/kubepods/besteffort/pod") + kUid);
  CgroupWorkloads w = node.workloads();
  EXPECT_EQ(w.workload_of(pod).name, kUid) << "no log directory yet: the UID";
  node.logs.mkdirs(std::string("/shop_cart-0_") + kUid);
  node.now += 1s;
  EXPECT_EQ(w.workload_of(pod).name, kUid) << "the directories are read again only so often";
  node.now += 10s;
  EXPECT_EQ(w.workload_of(pod).name, "shop/cart-0");
  EXPECT_EQ(w.workload_of(pod).pod_uid, kUid);
}

TEST(CgroupWorkloads, ACgroupMadeAfterItsFirstSampleIsNamedOnceTheIndexWalksAgain) {
  Node node;
  CgroupWorkloads w = node.workloads();
  EXPECT_EQ(w.workload_of(node.cgroups.inode("")).name, "[kernel threads (root cgroup)]");
  const uint64_t late = node.cgroups.mkdirs("/system.slice/late.service");
  node.now += 2s;
  EXPECT_EQ(w.workload_of(late).name, "late.service");
}

CgroupChange made(uint64_t id, uint64_t parent, std::string name) {
  return {CgroupChange::Kind::Made, id, parent, std::move(name)};
}
CgroupChange removed(uint64_t id) { return {CgroupChange::Kind::Removed, id, 0, ""}; }

// A transient unit (systemd-run) made and removed between two drains: its samples, read at the
// next drain, carry the name the kernel reported when it was made.
TEST(CgroupWorkloads, ACgroupMadeAndRemovedBetweenDrainsKeepsItsName) {
  Node node;
  const uint64_t system = node.cgroups.mkdirs("/system.slice");
  CgroupWorkloads w = node.workloads();
  w.refresh();
  w.apply({made(900, system, "run-u42.service"), removed(900)});
  EXPECT_EQ(w.workload_of(900).name, "run-u42.service");
  EXPECT_EQ(w.workload_of(900).kind, Workload::Kind::Unit);
  EXPECT_EQ(w.stats().gone, 1u);
  EXPECT_EQ(w.stats().index.walks, 1u) << "no walk looked for it";
}

TEST(CgroupWorkloads, AGoneCgroupsNameIsKeptForItsLastDrainsThenForgotten) {
  Node node;
  const uint64_t job = node.cgroups.mkdirs("/ci.slice/job-7.scope");
  CgroupWorkloads w = node.workloads();
  w.refresh();
  EXPECT_EQ(w.workload_of(job).name, "job-7.scope");
  EXPECT_EQ(w.stats().cached, 1u);
  std::filesystem::remove(node.cgroups.root() + "/ci.slice/job-7.scope");
  w.apply({removed(job)});
  EXPECT_EQ(w.stats().cached, 0u) << "the live cache holds live cgroups";
  for (uint64_t drain = 0; drain < CgroupWorkloads::kGoneDrains; ++drain) {
    EXPECT_EQ(w.workload_of(job).name, "job-7.scope") << "drain " << drain;
    w.end_drain();
  }
  EXPECT_EQ(w.stats().gone, 0u);
  node.now += 2s;
  EXPECT_EQ(&w.workload_of(job), &kUnknownWorkload) << "forgotten; the tree has it no more";
}

TEST(CgroupWorkloads, AtMostMaxGoneNamesAreKeptTheOldestGoFirst) {
  Node node;
  const uint64_t ci = node.cgroups.mkdirs("/ci.slice");
  CgroupWorkloads::Options o;
  o.cgroup_root = node.cgroups.root();
  o.pod_logs_dir = node.logs.root();
  o.clock = [&node] { return node.now; };
  o.max_gone = 3;
  CgroupWorkloads w(std::move(o));
  w.refresh();
  std::vector<CgroupChange> burst;
  for (uint64_t id = 100; id < 105; ++id) {
    burst.push_back(made(id, ci, "job-" + std::to_string(id) + ".scope"));
    burst.push_back(removed(id));
  }
  w.apply(burst);
  EXPECT_EQ(w.stats().gone, 3u);
  EXPECT_EQ(w.stats().forgotten_early, 2u);
  EXPECT_EQ(&w.workload_of(100), &kUnknownWorkload);
  EXPECT_EQ(w.workload_of(104).name, "job-104.scope");
}

// Without the kernel's reports (their program refused): a cgroup a walk saw while it ran keeps
// its name once a later walk finds it gone.
TEST(CgroupWorkloads, WithoutReportsACgroupAWalkSawKeepsItsNameAfterItWent) {
  Node node;
  const uint64_t early = node.cgroups.mkdirs("/early.scope");
  CgroupWorkloads w = node.workloads();
  w.refresh();  // sees early.scope, never asked for
  std::filesystem::remove(node.cgroups.root() + "/early.scope");
  node.now += 2s;
  EXPECT_EQ(&w.workload_of(424242), &kUnknownWorkload);  // a miss: walks, early.scope is gone
  EXPECT_EQ(w.workload_of(early).name, "early.scope");
}

TEST(CgroupWorkloads, AGonePodIsNamedOnceItsLogDirectoryAppears) {
  Node node;
  const uint64_t besteffort = node.cgroups.mkdirs("/kubepods/besteffort");
  CgroupWorkloads w = node.workloads();
  w.refresh();
  w.apply({made(77, besteffort, std::string("pod") + kUid), removed(77)});
  EXPECT_EQ(w.workload_of(77).name, kUid);
  node.logs.mkdirs(std::string("/batch_nightly-29_") + kUid);
  node.now += 11s;
  EXPECT_EQ(w.workload_of(77).name, "batch/nightly-29");
}

TEST(CgroupWorkloads, WithoutAUnifiedHierarchyEveryIdIsUnknown) {
  CgroupWorkloads w(CgroupWorkloads::Options{});
  EXPECT_EQ(&w.workload_of(1), &kUnknownWorkload);
}

}  // namespace
}  // namespace hucprof
