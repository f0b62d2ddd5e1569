#pragma once
#include <optional>
#include <string_view>
#include <vector>

namespace hucprof {

// Parses the kernel's CPU list format ("0-3,5,7-8\n", as in /sys/devices/system/cpu/online).
// nullopt on malformed input, including ranges out of ascending order or overlapping.
std::optional<std::vector<int>> parse_cpu_list(std::string_view text);

}  // namespace hucprof
