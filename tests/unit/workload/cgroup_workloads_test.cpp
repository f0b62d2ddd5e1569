// cgroup id → workload, from a cgroup tree and kubelet's pod log directories of the test's own.
#include "workload/cgroup_workloads.h"

#include <gtest/gtest.h>

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

TEST(CgroupWorkloads, WithoutAUnifiedHierarchyEveryIdIsUnknown) {
  CgroupWorkloads w(CgroupWorkloads::Options{});
  EXPECT_EQ(&w.workload_of(1), &kUnknownWorkload);
}

}  // namespace
}  // namespace hucprof
