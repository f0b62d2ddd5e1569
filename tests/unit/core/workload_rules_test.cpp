#include "core/workload/workload_rules.h"

#include <gtest/gtest.h>

#include <string>

namespace hucprof {
namespace {

// Container ids are 64 hex digits in every runtime below; pod UIDs are UUIDs (kubelet makes a
// static pod's UID the hex MD5 of its manifest instead: pkg/kubelet/config/common.go).
constexpr std::string_view kId = "a38f7760b7aeee2250b6cef7479fc0e951234f8433f5debf586d273bbe376194";
constexpr std::string_view kId2 =
    "d22b6ff330791155bd3fc941dcb301f782ee33e74091e98115003da20ff488f0";
constexpr std::string_view kUid = "c4a73744-8e75-4877-b18b-1fcea4d91af7";
constexpr std::string_view kUidSystemd = "c4a73744_8e75_4877_b18b_1fcea4d91af7";
constexpr std::string_view kStaticUid = "9dd4e461268c8034f5c8564e155c67a6";
static_assert(kId.size() == 64 && kId2.size() == 64);

std::string s(std::string_view v) { return std::string(v); }

Workload classify(const std::string& path) {
  return classify_cgroup(path, WorkloadRules::defaults());
}

Workload unit(std::string name) {
  Workload w;
  w.kind = Workload::Kind::Unit;
  w.name = std::move(name);
  return w;
}

Workload container(std::string_view runtime, std::string_view id) {
  Workload w;
  w.kind = Workload::Kind::Container;
  w.runtime = s(runtime);
  w.container_id = s(id);
  w.name = s(runtime) + ":" + s(id.substr(0, 12));
  return w;
}

Workload pod(std::string_view uid, std::string_view runtime = "", std::string_view id = "") {
  Workload w;
  w.kind = Workload::Kind::Pod;
  w.name = s(uid);
  w.pod_uid = s(uid);
  w.runtime = s(runtime);
  w.container_id = s(id);
  return w;
}

Workload cgroup(std::string name) {
  Workload w;
  w.name = std::move(name);
  return w;
}

// systemd puts a unit's processes in a cgroup named after the unit, below its slice; slices
// nest by the dashes in their names (systemd.slice(5), systemd.io/CGROUP_DELEGATION).
TEST(WorkloadRules, SystemServicesAreTheirUnit) {
  EXPECT_EQ(classify("/system.slice/nginx.service"), unit("nginx.service"));
  EXPECT_EQ(classify("/system.slice/system-getty.slice/getty@tty1.service"),
            unit("getty@tty1.service"));
  // PID 1 lives in init.scope (systemd.special(7)).
  EXPECT_EQ(classify("/init.scope"), unit("init.scope"));
  // A service that delegates its subtree (Delegate=yes) keeps the name for what runs below.
  EXPECT_EQ(classify("/system.slice/systemd-nspawn@web.service/payload"),
            unit("systemd-nspawn@web.service"));
  // Escaped names (systemd-escape: '-' in a path becomes \x2d) are unit names too.
  EXPECT_EQ(classify("/system.slice/system-openvpn\\x2dclient.slice/openvpn-client@home.service"),
            unit("openvpn-client@home.service"));
}

// Logins: pam_systemd puts each session in session-<id>.scope below user-<uid>.slice; each
// user's systemd instance is user@<uid>.service, whose own units are below it in app.slice
// (systemd.special(7)) — named within their manager, since another user can have the same.
TEST(WorkloadRules, UserSessionsAndUserManagers) {
  EXPECT_EQ(classify("/user.slice/user-1000.slice/session-3.scope"), unit("session-3.scope"));
  EXPECT_EQ(classify("/user.slice/user-1000.slice/user@1000.service/app.slice/x.scope"),
            unit("user@1000.service/x.scope"));
  EXPECT_EQ(classify("/user.slice/user-1000.slice/user@1000.service/init.scope"),
            unit("user@1000.service/init.scope"));
  EXPECT_EQ(classify("/user.slice/user-1000.slice/user@1000.service/app.slice/"
                     "app-org.gnome.Terminal.slice/vte-spawn-4b1c.scope"),
            unit("user@1000.service/vte-spawn-4b1c.scope"));
}

// moby: the systemd driver's cgroup parent is "system.slice:docker:" + id, which runc's systemd
// driver makes the scope "docker-<id>.scope" (moby cmd/dockerd/daemon_systemd_unix.go,
// opencontainers/runc docs/systemd.md); the cgroupfs driver's parent is "docker".
TEST(WorkloadRules, DockerContainers) {
  EXPECT_EQ(classify("/system.slice/docker-" + s(kId) + ".scope"), container("docker", kId));
  EXPECT_EQ(classify("/docker/" + s(kId)), container("docker", kId));
  // A container running systemd has its own init.scope below: still the container.
  EXPECT_EQ(classify("/system.slice/docker-" + s(kId) + ".scope/init.scope"),
            container("docker", kId));
  // The daemon itself is a unit, and a scope that only looks like a container's is not one.
  EXPECT_EQ(classify("/system.slice/docker.service"), unit("docker.service"));
  EXPECT_EQ(classify("/system.slice/docker-compose-app.scope"), unit("docker-compose-app.scope"));
  EXPECT_EQ(classify("/docker/not-an-id"), cgroup("/docker/not-an-id"));
}

// podman: with the systemd cgroup manager it hands the OCI runtime "<slice>:libpod:<id>", so
// containers run in libpod-<id>.scope below machine.slice (root) or the user's manager
// (rootless); conmon, which watches one, in libpod-conmon-<id>.scope (containers/podman
// libpod/oci_conmon_linux.go).
TEST(WorkloadRules, PodmanContainersAndTheirMonitor) {
  EXPECT_EQ(classify("/machine.slice/libpod-" + s(kId) + ".scope"), container("podman", kId));
  EXPECT_EQ(classify("/machine.slice/libpod-" + s(kId) + ".scope/container"),
            container("podman", kId));
  EXPECT_EQ(classify("/user.slice/user-1000.slice/user@1000.service/user.slice/libpod-" + s(kId) +
                     ".scope"),
            container("podman", kId));
  EXPECT_EQ(classify("/machine.slice/libpod-conmon-" + s(kId) + ".scope"),
            unit("libpod-conmon-" + s(kId) + ".scope"));
}

// kubelet names pod cgroups from {"kubepods", QoS class, "pod<uid>"}: the systemd driver turns
// each part's '-' into '_' and expands the joined name into nested slices,
// "/kubepods.slice/kubepods-burstable.slice/kubepods-burstable-pod1234_abcd_5678_efgh.slice";
// the cgroupfs driver joins them as directories, "/kubepods/burstable/pod1234-abcd-5678-efgh".
// Guaranteed pods have no QoS part (kubernetes pkg/kubelet/cm/cgroup_manager_linux.go,
// pod_container_manager_linux.go). The runtime then names the container below the pod:
// containerd's CRI plugin "cri-containerd-<id>.scope", CRI-O "crio-<id>.scope" (scopePrefix
// "crio", internal/config/cgmgr) and "crio-<id>" with its cgroupfs manager, containerd with
// cgroupfs the bare id (kubernetes test/e2e_node: SystemdPathPrefixOfRuntime).
TEST(WorkloadRules, KubernetesPodsUnderTheSystemdDriver) {
  const std::string burstable =
      "/kubepods.slice/kubepods-burstable.slice/kubepods-burstable-pod" + s(kUidSystemd) + ".slice";
  EXPECT_EQ(classify(burstable + "/cri-containerd-" + s(kId) + ".scope"),
            pod(kUid, "containerd", kId));
  EXPECT_EQ(classify(burstable + "/crio-" + s(kId2) + ".scope"), pod(kUid, "cri-o", kId2));
  EXPECT_EQ(classify(burstable + "/docker-" + s(kId) + ".scope"), pod(kUid, "docker", kId));
  // The pod's own cgroup, and CRI-O's conmon (conmon_cgroup = "pod"): the pod, no container.
  EXPECT_EQ(classify(burstable), pod(kUid));
  EXPECT_EQ(classify(burstable + "/crio-conmon-" + s(kId2) + ".scope"), pod(kUid));

  const std::string guaranteed = "/kubepods.slice/kubepods-pod" + s(kUidSystemd) +
                                 ".slice/cri-containerd-" + s(kId) + ".scope";
  EXPECT_EQ(classify(guaranteed), pod(kUid, "containerd", kId));
  const std::string besteffort_static =
      "/kubepods.slice/kubepods-besteffort.slice/"
      "kubepods-besteffort-pod" +
      s(kStaticUid) + ".slice/crio-" + s(kId) + ".scope";
  EXPECT_EQ(classify(besteffort_static), pod(kStaticUid, "cri-o", kId));
  // kubelet --cgroup-root=/kubelet.slice: the same names with a "kubelet-" in front.
  EXPECT_EQ(classify("/kubelet.slice/kubelet-kubepods.slice/kubelet-kubepods-burstable.slice/"
                     "kubelet-kubepods-burstable-pod" +
                     s(kUidSystemd) + ".slice/cri-containerd-" + s(kId) + ".scope"),
            pod(kUid, "containerd", kId));
}

TEST(WorkloadRules, KubernetesPodsUnderTheCgroupfsDriver) {
  EXPECT_EQ(classify("/kubepods/besteffort/pod" + s(kUid) + "/" + s(kId)), pod(kUid, "", kId));
  EXPECT_EQ(classify("/kubepods/burstable/pod" + s(kUid) + "/crio-" + s(kId2)),
            pod(kUid, "cri-o", kId2));
  EXPECT_EQ(classify("/kubepods/pod" + s(kUid) + "/" + s(kId)), pod(kUid, "", kId));
  EXPECT_EQ(classify("/kubepods/burstable/pod" + s(kUid) + "/crio-conmon-" + s(kId2)), pod(kUid));
  EXPECT_EQ(classify("/kubepods/burstable/pod" + s(kUid)), pod(kUid));
}

TEST(WorkloadRules, KubeletsOwnCgroupsAreNoPod) {
  EXPECT_EQ(classify("/kubepods.slice/kubepods-burstable.slice"),
            cgroup("/kubepods.slice/kubepods-burstable.slice"));
  EXPECT_EQ(classify("/kubepods/besteffort"), cgroup("/kubepods/besteffort"));
  // "pod" directories outside kubepods are someone else's.
  EXPECT_EQ(classify("/pod" + s(kUid)), cgroup("/pod" + s(kUid)));
  EXPECT_EQ(classify("/mykubepods-pod" + s(kUidSystemd) + ".slice"),
            cgroup("/mykubepods-pod" + s(kUidSystemd) + ".slice"));
  // A pod part with characters no UID has.
  EXPECT_EQ(classify("/kubepods/pod!x/" + s(kId)).kind, Workload::Kind::Cgroup);
}

TEST(WorkloadRules, TheRootIsNamedForWhatItHoldsAnythingElseIsItsPath) {
  // Named for what it holds: "/" read as the whole machine.
  EXPECT_EQ(classify("/"), cgroup("[kernel threads (root cgroup)]"));
  EXPECT_EQ(classify(""), cgroup("[kernel threads (root cgroup)]"));
  EXPECT_EQ(classify("/hucprof-test/a/"), cgroup("/hucprof-test/a"));
  EXPECT_EQ(classify("//a//b"), cgroup("/a/b"));
  EXPECT_EQ(classify("/system.slice"), cgroup("/system.slice"));
}

TEST(WorkloadRules, LongPathsKeepTheirTailWithinTheBound) {
  const auto rules = WorkloadRules::defaults();
  std::string path;
  for (int i = 0; i < 40; ++i) path += "/level" + std::to_string(i);
  const auto w = classify_cgroup(path, rules);
  EXPECT_EQ(w.kind, Workload::Kind::Cgroup);
  EXPECT_LE(w.name.size(), rules.max_cgroup_name_bytes);
  EXPECT_EQ(w.name.substr(0, 4), ".../");
  EXPECT_TRUE(w.name.ends_with("/level39"));
  EXPECT_EQ(path.find(w.name.substr(3)), path.size() - (w.name.size() - 3));

  // No '/' to cut at: the cut never lands inside a UTF-8 sequence ("é" is 2 bytes).
  std::string word = "/";
  for (int i = 0; i < 100; ++i) word += "\xc3\xa9";
  const auto cut = classify_cgroup(word, rules).name;
  EXPECT_LE(cut.size(), rules.max_cgroup_name_bytes);
  ASSERT_GT(cut.size(), 3u);
  EXPECT_EQ(static_cast<unsigned char>(cut[3]), 0xc3);
}

// mkdir in a delegated subtree takes any bytes but '/' and NUL; the name is a label value as it
// is (Prometheus refuses a scrape with invalid UTF-8, a terminal obeys escape sequences), so
// what is not printable UTF-8 is written as systemd-escape(1) writes it: \xNN.
TEST(WorkloadRules, NamesAreLabelValuesWhateverBytesTheCgroupHas) {
  EXPECT_EQ(classify("/tenant/caf\xc3\xa9\xff\x1b[31m\x7f\xc2\x9b\t"),
            cgroup("/tenant/caf\xc3\xa9\\xff\\x1b[31m\\x7f\\xc2\\x9b\\x09"));
  // A truncated sequence and a surrogate (ED A0 80) are no UTF-8 either.
  EXPECT_EQ(classify("/a\xe2\x82/\xed\xa0\x80"), cgroup("/a\\xe2\\x82/\\xed\\xa0\\x80"));

  // What the fuzzer found: a long component of invalid bytes came out as its raw tail.
  const auto rules = WorkloadRules::defaults();
  const auto long_name =
      classify_cgroup("/system.slice/systemd-ns" + std::string(104, '\xee') + "pawn@we", rules);
  EXPECT_EQ(long_name.kind, Workload::Kind::Cgroup);
  EXPECT_LE(long_name.name.size(), rules.max_cgroup_name_bytes);
  EXPECT_TRUE(long_name.name.starts_with("...") && long_name.name.ends_with("\\xeepawn@we"))
      << long_name.name;
  EXPECT_EQ(long_name.name.find_first_not_of("./\\xe0123456789abcdefghijklmnopqrstuvwxyz@-"),
            std::string::npos)
      << long_name.name;
}

TEST(WorkloadRules, KindNamesAreTheLabelValues) {
  EXPECT_EQ(kind_name(Workload::Kind::Unit), "unit");
  EXPECT_EQ(kind_name(Workload::Kind::Container), "container");
  EXPECT_EQ(kind_name(Workload::Kind::Pod), "pod");
  EXPECT_EQ(kind_name(Workload::Kind::Cgroup), "cgroup");
}

}  // namespace
}  // namespace hucprof
