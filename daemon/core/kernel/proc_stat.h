#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace hucprof {

// Busy CPU time of all CPUs since boot, from the aggregate "cpu" line of /proc/stat: user + nice
// + system + irq + softirq. Left out: idle and iowait (the CPU had nothing to run), steal (the
// hypervisor ran someone else) and guest/guest_nice (already inside user/nice). This is the
// denominator of the latency-based prediction: the time the CPUs spent doing any work.
//
// `ticks_per_second` is USER_HZ (sysconf(_SC_CLK_TCK), 100 on every Linux ABI). nullopt when
// the text has no well-formed "cpu" line.
std::optional<uint64_t> parse_busy_cpu_ns(std::string_view proc_stat, uint64_t ticks_per_second);

// Reads and parses /proc/stat (or `path`); nullopt when unreadable or malformed.
std::optional<uint64_t> read_busy_cpu_ns(const std::string& path = "/proc/stat");

}  // namespace hucprof
