#pragma once
#include <cstddef>
#include <string>

#include "core/workload/pod_log_dir.h"

namespace hucprof {

inline constexpr const char* kPodLogsDir = "/var/log/pods";

struct PodLogDirs {
  PodNames pods;
  std::string error;    // why `dir` could not be listed; "" when it was (or does not exist)
  size_t other = 0;     // entries that are not "<namespace>_<name>_<uid>" directories
  size_t over_cap = 0;  // pod directories past max_pods, not read
};

// The pods kubelet keeps log directories for in `dir`. A node without kubelet has no such
// directory: that is no error, just no pods. At most `max_pods` are read (a node runs ~110 pods;
// the cap is for a directory nobody cleans).
PodLogDirs read_pod_log_dirs(const std::string& dir = kPodLogsDir, size_t max_pods = 4096);

}  // namespace hucprof
