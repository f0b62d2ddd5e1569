#pragma once
#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

namespace hucprof {

// Which workload a cgroup v2 path belongs to: the name an SRE knows it by, from the path alone
// (the path is relative to the unified hierarchy's root, as /proc/PID/cgroup's "0::" line
// gives it). Nothing is looked up here; pod namespaces and names come from kubelet's log
// directories (core/workload/pod_log_dir.h) by the pod UID found here.
struct Workload {
  enum class Kind {
    Unit,       // a systemd service or scope: "nginx.service", "user@1000.service/x.scope"
    Container,  // a container outside Kubernetes: "docker:0123456789ab"
    Pod,        // a Kubernetes pod (and, when the path goes that deep, one of its containers)
    Cgroup,     // nothing matched: the path itself, bounded, other bytes than printable
                // UTF-8 written "\xNN"
  };
  Kind kind = Kind::Cgroup;
  std::string name;     // never empty; valid UTF-8 without control characters: a label value as is
  std::string pod_uid;  // Pod: dashes restored ("8dbf5c3c-...-60c2")
  std::string container_id;  // Container, and Pod when the path names one (full 64 hex digits)
  std::string runtime;       // Container, Pod with a container: "docker", "containerd", ...
  bool operator==(const Workload&) const = default;
};

std::string_view kind_name(Workload::Kind kind);  // "unit", "container", "pod", "cgroup"

// The data the classifier works from. Kept as data so that a new runtime's scope name is a
// one-line change.
struct WorkloadRules {
  // A cgroup directory a container runtime names after the container: prefix + id + suffix.
  struct ContainerName {
    std::string prefix;  // "docker-"
    std::string suffix;  // ".scope" (systemd driver), "" (cgroupfs driver)
    std::string runtime;
  };
  // Checked in order, first match wins.
  std::vector<ContainerName> containers;
  // Cgroups of the process that watches a container (conmon), named after the container they
  // watch but not the container: they are counted with their pod, or as their own unit.
  std::vector<ContainerName> monitors;
  // The cgroupfs drivers' parent directories whose children are bare container ids
  // ("/docker/<id>"), with the runtime they mean.
  std::vector<ContainerName> id_parents;  // prefix = the parent directory's name
  size_t container_id_hex_digits = 64;    // every runtime above makes 64-hex-digit ids
  size_t short_id_hex_digits = 12;        // as `docker ps`, `crictl ps`, `podman ps` show them
  // Kubelet's pod cgroups: "<...>kubepods<...>-pod<uid, '-' as '_'>.slice" (systemd driver) or a
  // "pod<uid>" directory below a "kubepods" one (cgroupfs driver).
  std::string pods_root = "kubepods";
  std::string pod_prefix = "pod";
  size_t max_pod_uid_bytes = 64;
  // systemd units that hold processes (slices never do).
  std::vector<std::string> unit_suffixes;
  size_t max_unit_name_bytes = 255;  // systemd's UNIT_NAME_MAX less its NUL
  // The unmatched path is kept to this many bytes (its tail: the part that tells cgroups apart).
  size_t max_cgroup_name_bytes = 128;

  static WorkloadRules defaults();
};

// The root cgroup's workload: named for what it holds, kernel threads (on a systemd host every
// process is in a unit's cgroup; without systemd also whatever nobody placed), not "/", which
// reads as the whole machine.
inline constexpr const char* kRootCgroupWorkload = "[kernel threads (root cgroup)]";

// The workload of `path` ("/system.slice/nginx.service"); "/" and "" are the root cgroup.
Workload classify_cgroup(std::string_view path, const WorkloadRules& rules);

}  // namespace hucprof
