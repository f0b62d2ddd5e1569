#pragma once
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace hucprof {

// Parses the kernel's CPU list format ("0-3,5,7-8\n", as in /sys/devices/system/cpu/online).
// nullopt on malformed input, including ranges out of ascending order or overlapping.
std::optional<std::vector<int>> parse_cpu_list(std::string_view text);

}  // namespace hucprof

namespace hucprof {

// The kernel's format back from a sorted list of distinct CPUs: {0, 2, 3} -> "0,2-3".
std::string format_cpu_list(const std::vector<int>& cpus);

}  // namespace hucprof
