#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "core/base/result.h"

namespace hucprof {

// What `hucprof record` records, decided from its flags the way perf decides (core/: pure; the
// edge checks that the processes and the cgroup exist and resolves a unit to its cgroup).

// The most processes -p names, and the highest CPU -C can name: the BPF programs hold them in
// fixed arrays (bpf/hucprof_abi.h, HUC_MAX_FOLLOW_TGIDS and HUC_MAX_FOLLOW_CPUS).
inline constexpr size_t kMaxFollowedPids = 64;
inline constexpr int kMaxFollowedCpu = 1023;

// What the BPF programs count, as `record` resolved it (bpf/usercopy_common.bpf.h, huc_followed):
// empty/0 fields follow everything. The daemon (`run`) follows everything.
struct FollowFilter {
  uint64_t cgroup_id = 0;       // a cgroup v2 id: COMMAND's own cgroup, or -G's
  std::vector<int> tgids = {};  // -p
  std::vector<int> cpus = {};   // -C; sampling also opens its perf events on these CPUs only
};

struct RecordTargetFlags {
  bool all_cpus = false;                   // -a / --all-cpus
  std::optional<std::string> pids = {};    // -p / --pid PID[,PID...]
  std::optional<std::string> cpus = {};    // -C / --cpu 0,2-3
  std::optional<std::string> cgroup = {};  // -G / --cgroup PATH|UNIT
  bool only_command = false;               // --only-command: the old spelling of following COMMAND
  bool has_command = false;                // a COMMAND after --
};

// A cgroup as -G named it: a path below the unified root ("/system.slice/x.service"), or a
// systemd unit whose cgroup the edge finds in the tree.
struct CgroupName {
  std::string path;  // "/..." below the unified root; "" when `unit` is set
  std::string unit;  // "nginx.service"
  // `path` is absolute ("/sys/fs/cgroup/unified/x"): the edge takes the unified root off it (the
  // root is /sys/fs/cgroup itself only on a pure cgroup v2 host).
  bool absolute = false;
};

struct RecordTarget {
  // COMMAND runs in a cgroup of its own and only that cgroup is recorded (`-- COMMAND` alone).
  bool follow_command = false;
  std::vector<int> pids;                 // -p: the tasks of these processes (sorted, distinct)
  std::vector<int> cpus;                 // -C: only these CPUs; empty: every online CPU
  std::optional<CgroupName> cgroup;      // -G: only the tasks of this cgroup
  bool deprecated_only_command = false;  // --only-command was given: warn once

  // Nothing but the whole machine: no task or CPU filter.
  bool whole_machine() const { return !follow_command && pids.empty() && cpus.empty() && !cgroup; }
};

// The target, or the one line saying which flags do not go together or which value is wrong
// (exit 2). `online_cpus`: /sys/devices/system/cpu/online, parsed.
Result<RecordTarget> plan_record_target(const RecordTargetFlags& flags,
                                        const std::vector<int>& online_cpus);

// -G's text: an absolute path under /sys/fs/cgroup, a path below the unified root (with or
// without its leading "/", as perf -G takes it), or a systemd unit name (a name with a unit
// suffix and no "/"). ".." and "." are refused: the path stays below the root.
Result<CgroupName> parse_cgroup_name(const std::string& text);

// Whose CPU the recording's denominator is, in words for "busy CPU of ...": "`make -j2` and its
// children", "PID 1234", "cgroup /system.slice/nginx.service on CPUs 0-1", "the whole machine".
// `command`: COMMAND as one line; `cgroup_path`: the cgroup -G resolved to.
std::string describe_record_target(const RecordTarget& target, const std::string& command,
                                   const std::string& cgroup_path);

// Processes as the lines about -p name them: "PID 1234", "PIDs 7,30".
std::string pid_words(const std::vector<int>& pids);

}  // namespace hucprof
