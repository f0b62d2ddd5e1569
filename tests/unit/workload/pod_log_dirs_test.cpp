#include "workload/pod_log_dirs.h"

#include <gtest/gtest.h>

#include <fstream>

#include "temp_tree.h"

namespace hucprof {
namespace {

using test::TempTree;

// The layout kubelet leaves: /var/log/pods/<namespace>_<name>_<uid>/<container>/<restart>.log.
TEST(PodLogDirs, ReadsThePodsOfAKubeletLogTree) {
  TempTree tree;
  tree.mkdirs("/kube-system_coredns-5d78c9869d-x7k2p_c4a73744-8e75-4877-b18b-1fcea4d91af7/coredns");
  std::ofstream(tree.root() +
                "/kube-system_coredns-5d78c9869d-x7k2p_c4a73744-8e75-4877-b18b-1fcea4d91af7/"
                "coredns/0.log")
      << "log line\n";
  tree.mkdirs("/shop_cart-0_0317cf1a-ed54-4f77-b101-05f59edbbbae");
  tree.mkdirs("/0317cf1a-ed54-4f77-b101-05f59edbbb00");  // the old layout
  std::ofstream(tree.root() + "/shop_file-0_0317cf1a-ed54") << "not a directory";
  std::filesystem::create_directory_symlink(
      tree.root() + "/shop_cart-0_0317cf1a-ed54-4f77-b101-05f59edbbbae",
      tree.root() + "/shop_link-0_0317cf1a-ed54-4f77-b101-05f59edbbbaf");

  const auto dirs = read_pod_log_dirs(tree.root());
  EXPECT_EQ(dirs.error, "");
  ASSERT_EQ(dirs.pods.size(), 2u);
  EXPECT_EQ(dirs.pods.at("c4a73744-8e75-4877-b18b-1fcea4d91af7"),
            (PodName{"kube-system", "coredns-5d78c9869d-x7k2p"}));
  EXPECT_EQ(dirs.pods.at("0317cf1a-ed54-4f77-b101-05f59edbbbae"), (PodName{"shop", "cart-0"}));
  EXPECT_EQ(dirs.other, 3u);
  EXPECT_EQ(dirs.over_cap, 0u);
}

TEST(PodLogDirs, ANodeWithoutKubeletHasNoPodsAndNoError) {
  const auto dirs = read_pod_log_dirs("/nonexistent/huc-var-log-pods");
  EXPECT_TRUE(dirs.pods.empty());
  EXPECT_EQ(dirs.error, "");
}

TEST(PodLogDirs, AFileWhereTheDirectoryShouldBeIsAnError) {
  TempTree tree;
  std::ofstream(tree.root() + "/pods") << "x";
  const auto dirs = read_pod_log_dirs(tree.root() + "/pods");
  EXPECT_EQ(dirs.error, tree.root() + "/pods: Not a directory");
}

TEST(PodLogDirs, ReadsAtMostTheCapAndCountsTheRest) {
  TempTree tree;
  for (int i = 0; i < 5; ++i)
    tree.mkdirs("/ns_pod-" + std::to_string(i) + "_uid" + std::to_string(i));
  const auto dirs = read_pod_log_dirs(tree.root(), 3);
  EXPECT_EQ(dirs.pods.size(), 3u);
  EXPECT_EQ(dirs.over_cap, 2u);
}

}  // namespace
}  // namespace hucprof
