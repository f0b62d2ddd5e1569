#pragma once
#include <map>
#include <optional>
#include <string>
#include <string_view>

#include "core/workload/workload_rules.h"

namespace hucprof {

// What the node itself says about a pod, without the API server: kubelet names each pod's log
// directory "<namespace>_<name>_<uid>" (under /var/log/pods by default). '_' can appear in
// none of the three (namespaces are DNS labels, pod names DNS subdomains, UIDs UUIDs), so the
// name splits back unambiguously.
struct PodName {
  std::string pod_namespace;
  std::string name;
  bool operator==(const PodName&) const = default;
};

struct PodLogDir {
  std::string uid;
  PodName pod;
};

// nullopt for anything else in the directory, including the pre-1.14 layout that was the bare
// UID (it names no namespace or pod).
std::optional<PodLogDir> parse_pod_log_dir(std::string_view entry);

// pod UID → its namespace and name.
using PodNames = std::map<std::string, PodName, std::less<>>;

// A pod workload named "<namespace>/<name>" when the node knows the pod; left as its UID
// otherwise (a pod whose log directory is gone, or a node that keeps logs elsewhere).
void name_pod(Workload& workload, const PodNames& pods);

}  // namespace hucprof
