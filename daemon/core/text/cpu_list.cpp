#include "core/text/cpu_list.h"

#include <charconv>

namespace hucprof {

std::optional<std::vector<int>> parse_cpu_list(std::string_view text) {
  while (!text.empty() && (text.back() == '\n' || text.back() == ' ')) text.remove_suffix(1);
  std::vector<int> cpus;
  if (text.empty()) return cpus;
  while (!text.empty()) {
    auto comma = text.find(',');
    std::string_view item = text.substr(0, comma);
    text = comma == std::string_view::npos ? std::string_view{} : text.substr(comma + 1);
    auto dash = item.find('-');
    std::string_view lo_text = item.substr(0, dash);
    std::string_view hi_text = dash == std::string_view::npos ? lo_text : item.substr(dash + 1);
    int lo = 0, hi = 0;
    auto r1 = std::from_chars(lo_text.data(), lo_text.data() + lo_text.size(), lo);
    auto r2 = std::from_chars(hi_text.data(), hi_text.data() + hi_text.size(), hi);
    if (lo_text.empty() || hi_text.empty() || r1.ec != std::errc{} ||
        r1.ptr != lo_text.data() + lo_text.size() || r2.ec != std::errc{} ||
        r2.ptr != hi_text.data() + hi_text.size() || lo < 0 || hi < lo || hi > 65535) {
      return std::nullopt;
    }
    // The kernel prints ranges in ascending order; anything else would list a CPU twice (and
    // open two perf events on it) or is not the kernel's text.
    if (!cpus.empty() && lo <= cpus.back()) return std::nullopt;
    for (int cpu = lo; cpu <= hi; ++cpu) cpus.push_back(cpu);
  }
  return cpus;
}

}  // namespace hucprof

namespace hucprof {

std::string format_cpu_list(const std::vector<int>& cpus) {
  std::string out;
  for (size_t i = 0; i < cpus.size();) {
    size_t j = i;
    while (j + 1 < cpus.size() && cpus[j + 1] == cpus[j] + 1) ++j;
    if (!out.empty()) out += ',';
    out += std::to_string(cpus[i]);
    if (j > i) out += '-' + std::to_string(cpus[j]);
    i = j + 1;
  }
  return out;
}

}  // namespace hucprof
