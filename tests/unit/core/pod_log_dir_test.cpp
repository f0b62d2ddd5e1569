#include "core/workload/pod_log_dir.h"

#include <gtest/gtest.h>

namespace hucprof {
namespace {

// kubelet's BuildPodLogsDirectory joins namespace, pod name and UID with "_" below --pod-logs-dir
// (kubernetes pkg/kubelet/kuberuntime/helpers.go, logPathDelimiter); before 1.14 the directory
// was the bare UID, which names no pod.
TEST(PodLogDir, NamespaceNameAndUid) {
  const auto dir = parse_pod_log_dir(
      "kube-system_coredns-5d78c9869d-x7k2p_c4a73744-8e75-4877-b18b-1fcea4d91af7");
  ASSERT_TRUE(dir);
  EXPECT_EQ(dir->uid, "c4a73744-8e75-4877-b18b-1fcea4d91af7");
  EXPECT_EQ(dir->pod, (PodName{"kube-system", "coredns-5d78c9869d-x7k2p"}));

  // Static pods: the UID is the manifest's hex MD5; pod names may hold dots (DNS subdomains).
  const auto static_pod =
      parse_pod_log_dir("kube-system_etcd-node1.example.com_9dd4e461268c8034f5c8564e155c67a6");
  ASSERT_TRUE(static_pod);
  EXPECT_EQ(static_pod->pod.name, "etcd-node1.example.com");
}

TEST(PodLogDir, AnythingElseIsNoPod) {
  for (const char* entry :
       {"c4a73744-8e75-4877-b18b-1fcea4d91af7",  // the old layout
        "default_web", "default_web_uid_extra", "_web_c4a73744", "default__c4a73744",
        "default_web_", "Default_web_c4a73744", "default_-web_c4a73744", "default_web_c4a7 3744",
        "", "..", "default_web_c4a73744/../x"}) {
    EXPECT_FALSE(parse_pod_log_dir(entry)) << entry;
  }
  EXPECT_FALSE(parse_pod_log_dir(std::string(64, 'a') + "_web_c4a73744")) << "namespace > 63";
}

TEST(PodLogDir, PodsAreNamedWhereTheNodeKnowsThem) {
  const PodNames pods = {{"c4a73744-8e75-4877-b18b-1fcea4d91af7", {"shop", "cart-0"}}};
  Workload known;
  known.kind = Workload::Kind::Pod;
  known.pod_uid = known.name = "c4a73744-8e75-4877-b18b-1fcea4d91af7";
  name_pod(known, pods);
  EXPECT_EQ(known.name, "shop/cart-0");
  EXPECT_EQ(known.pod_uid, "c4a73744-8e75-4877-b18b-1fcea4d91af7");

  Workload unknown = known;
  unknown.pod_uid = unknown.name = "0317cf1a-ed54-4f77-b101-05f59edbbbae";
  name_pod(unknown, pods);
  EXPECT_EQ(unknown.name, "0317cf1a-ed54-4f77-b101-05f59edbbbae");

  Workload not_a_pod;
  not_a_pod.kind = Workload::Kind::Unit;
  not_a_pod.name = "nginx.service";
  not_a_pod.pod_uid = "c4a73744-8e75-4877-b18b-1fcea4d91af7";
  name_pod(not_a_pod, pods);
  EXPECT_EQ(not_a_pod.name, "nginx.service");
}

}  // namespace
}  // namespace hucprof
