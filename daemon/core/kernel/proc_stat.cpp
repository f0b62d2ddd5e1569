#include "core/kernel/proc_stat.h"

#include <unistd.h>

#include <array>
#include <charconv>

#include "core/base/time_units.h"
#include "core/files/file_text.h"

namespace hucprof {
namespace {

// Field order of the "cpu" line (proc(5)); kernels since 2.6.33 print all ten.
enum Field { kUser, kNice, kSystem, kIdle, kIowait, kIrq, kSoftirq, kFields };

}  // namespace

std::optional<uint64_t> parse_busy_cpu_ns(std::string_view text, uint64_t ticks_per_second) {
  constexpr std::string_view kPrefix = "cpu ";
  if (ticks_per_second == 0 || !text.starts_with(kPrefix)) return std::nullopt;
  std::string_view line = text.substr(kPrefix.size(), text.find('\n') - kPrefix.size());
  std::array<uint64_t, kFields> v{};
  const char* p = line.data();
  const char* end = line.data() + line.size();
  for (uint64_t& field : v) {
    while (p < end && *p == ' ') ++p;
    auto [next, ec] = std::from_chars(p, end, field);
    if (ec != std::errc() || next == p) return std::nullopt;
    p = next;
  }
  const uint64_t ticks = v[kUser] + v[kNice] + v[kSystem] + v[kIrq] + v[kSoftirq];
  // Split to stay exact for any tick rate without overflowing before ~584 years of CPU time.
  return ticks / ticks_per_second * kNanosPerSecond +
         ticks % ticks_per_second * kNanosPerSecond / ticks_per_second;
}

std::optional<uint64_t> read_busy_cpu_ns(const std::string& path) {
  auto text = read_file_text(path);
  long hz = sysconf(_SC_CLK_TCK);
  if (!text || hz <= 0) return std::nullopt;
  return parse_busy_cpu_ns(*text, static_cast<uint64_t>(hz));
}

}  // namespace hucprof
