#pragma once
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <prometheus/metric_family.h>

namespace hucprof {

// Where the process_* metrics are read from; tests point this at a fake /proc.
struct ProcSources {
  std::string self_dir = "/proc/self";   // stat, limits, fd/
  std::string stat_path = "/proc/stat";  // btime
};

// The fields of /proc/<pid>/stat the process_* metrics need, in the kernel's units.
struct SelfStat {
  unsigned long long cpu_ticks = 0;    // utime + stime, clock ticks
  unsigned long long start_ticks = 0;  // starttime: clock ticks after boot
  unsigned long long virtual_bytes = 0;
  unsigned long long resident_pages = 0;
};

std::optional<SelfStat> parse_self_stat(std::string_view text);
// "btime" of /proc/stat: boot time, seconds since the epoch.
std::optional<unsigned long long> parse_boot_time(std::string_view proc_stat);
// Soft "Max open files" of /proc/<pid>/limits.
std::optional<unsigned long long> parse_max_open_files(std::string_view limits);

// process_cpu_seconds_total, process_resident_memory_bytes, process_virtual_memory_bytes,
// process_start_time_seconds, process_open_fds, process_max_fds with the names, types and
// meaning of the official Prometheus client libraries, so the usual dashboards work. A value
// that cannot be read is left out rather than exported as a misleading 0.
std::vector<prometheus::MetricFamily> process_families(const ProcSources& sources = {});

}  // namespace hucprof
