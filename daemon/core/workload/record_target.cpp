#include "core/workload/record_target.h"

#include <algorithm>
#include <array>
#include <charconv>
#include <string_view>

#include "core/base/quoted_value.h"
#include "core/text/cpu_list.h"

namespace hucprof {

namespace {

// The unit types systemd gives a cgroup of their own (systemd.unit(5)).
constexpr std::array<std::string_view, 6> kUnitSuffixes = {".service", ".scope", ".slice",
                                                           ".socket",  ".mount", ".swap"};
constexpr std::string_view kMountPrefix = "/sys/fs/cgroup";
// PID_MAX_LIMIT on 64-bit kernels.
constexpr long kMaxPid = 4194304;

bool is_unit_name(std::string_view text) {
  return std::any_of(kUnitSuffixes.begin(), kUnitSuffixes.end(), [&](std::string_view suffix) {
    return text.size() > suffix.size() && text.ends_with(suffix);
  });
}

Result<std::vector<int>> parse_pids(const std::string& text) {
  std::vector<int> pids;
  std::string_view rest = text;
  while (true) {
    const size_t comma = rest.find(',');
    const std::string_view item = rest.substr(0, comma);
    long pid = 0;
    const auto [end, ec] = std::from_chars(item.data(), item.data() + item.size(), pid);
    if (item.empty() || ec != std::errc{} || end != item.data() + item.size() || pid <= 0 ||
        pid > kMaxPid) {
      return Error{"-p " + quoted_value(text) + ": " + quoted_value(std::string(item)) +
                   " is not a process id (e.g. 1234,5678)"};
    }
    pids.push_back(static_cast<int>(pid));
    if (comma == std::string_view::npos) break;
    rest = rest.substr(comma + 1);
  }
  std::sort(pids.begin(), pids.end());
  pids.erase(std::unique(pids.begin(), pids.end()), pids.end());
  if (pids.size() > kMaxFollowedPids) {
    return Error{"-p: " + std::to_string(pids.size()) + " processes, at most " +
                 std::to_string(kMaxFollowedPids) + " (-G follows a cgroup of any size)"};
  }
  return pids;
}

Result<std::vector<int>> parse_cpus(const std::string& text, const std::vector<int>& online) {
  const auto cpus = parse_cpu_list(text);
  if (!cpus || cpus->empty()) {
    return Error{"-C " + quoted_value(text) +
                 ": not a CPU list like 0,2-3 (ascending, each CPU once)"};
  }
  for (int cpu : *cpus) {
    if (!std::binary_search(online.begin(), online.end(), cpu)) {
      return Error{"-C " + quoted_value(text) + ": CPU " + std::to_string(cpu) +
                   " is not online (online: " + format_cpu_list(online) + ")"};
    }
    if (cpu > kMaxFollowedCpu) {
      return Error{"-C: CPU " + std::to_string(cpu) + " is above the highest CPU -C takes, " +
                   std::to_string(kMaxFollowedCpu)};
    }
  }
  return *cpus;
}

// The first pair of flags that name two different sets of tasks, or "".
std::string conflict(const RecordTargetFlags& f) {
  if (f.only_command && (f.all_cpus || f.pids || f.cpus || f.cgroup)) {
    return "--only-command: it follows COMMAND, which -a, -p, -C and -G replace (and it is what "
           "-- COMMAND does by itself now)";
  }
  if (f.pids && f.cgroup) return "-p and -G: name processes or a cgroup, not both";
  if (f.pids && f.has_command) {
    return "-p and -- COMMAND: name processes that run, or a command to run, not both "
           "(--duration sets how long -p records)";
  }
  if (f.pids && f.all_cpus) return "-p and -a: name processes or the whole machine, not both";
  if (f.pids && f.cpus) return "-p and -C: name processes or CPUs, not both";
  return "";
}

}  // namespace

Result<CgroupName> parse_cgroup_name(const std::string& text) {
  if (text.empty()) return Error{"-G: empty (a cgroup path or a systemd unit name)"};
  if (text.find('/') == std::string::npos && is_unit_name(text)) return CgroupName{"", text};
  const std::string_view path_text = text;
  const bool absolute = path_text.starts_with(kMountPrefix) &&
                        (text.size() == kMountPrefix.size() || text[kMountPrefix.size()] == '/');
  std::string_view path = path_text;
  std::string out;
  while (!path.empty()) {
    const size_t slash = path.find('/');
    const std::string_view name = path.substr(0, slash);
    path = slash == std::string_view::npos ? std::string_view{} : path.substr(slash + 1);
    if (name.empty()) continue;
    if (name == "." || name == "..") {
      return Error{"-G " + quoted_value(text) +
                   ": \".\" and \"..\" are not allowed in a cgroup path"};
    }
    out += '/';
    out += name;
  }
  return CgroupName{out.empty() ? "/" : out, "", absolute};
}

Result<RecordTarget> plan_record_target(const RecordTargetFlags& flags,
                                        const std::vector<int>& online_cpus) {
  if (flags.only_command && !flags.has_command) {
    return Error{"--only-command: needs a COMMAND after --"};
  }
  if (auto why = conflict(flags); !why.empty()) return Error{why};
  RecordTarget target;
  target.deprecated_only_command = flags.only_command;
  if (flags.pids) {
    auto pids = parse_pids(*flags.pids);
    if (!pids.ok()) return pids.error();
    target.pids = std::move(pids).value();
  }
  if (flags.cpus) {
    auto cpus = parse_cpus(*flags.cpus, online_cpus);
    if (!cpus.ok()) return cpus.error();
    target.cpus = std::move(cpus).value();
  }
  if (flags.cgroup) {
    auto name = parse_cgroup_name(*flags.cgroup);
    if (!name.ok()) return name.error();
    target.cgroup = std::move(name).value();
  }
  // Like perf: a COMMAND alone is followed; beside -a, -C or -G it only says how long to record.
  target.follow_command = flags.has_command && !flags.all_cpus && !flags.cpus && !flags.cgroup;
  return target;
}

std::string pid_words(const std::vector<int>& pids) {
  std::string words = pids.size() == 1 ? "PID " : "PIDs ";
  for (size_t i = 0; i < pids.size(); ++i) words += (i ? "," : "") + std::to_string(pids[i]);
  return words;
}

std::string describe_record_target(const RecordTarget& target, const std::string& command,
                                   const std::string& cgroup_path) {
  std::string tasks;
  if (target.follow_command) tasks = "`" + command + "` and its children";
  if (!target.pids.empty()) tasks = pid_words(target.pids);
  if (target.cgroup) tasks = "cgroup " + cgroup_path;
  std::string cpus;
  if (!target.cpus.empty()) {
    cpus = (target.cpus.size() == 1 ? "CPU " : "CPUs ") + format_cpu_list(target.cpus);
  }
  if (tasks.empty()) return cpus.empty() ? "the whole machine" : cpus;
  return cpus.empty() ? tasks : tasks + " on " + cpus;
}

}  // namespace hucprof
