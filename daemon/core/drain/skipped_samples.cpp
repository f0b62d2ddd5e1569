#include "core/drain/skipped_samples.h"

#include <algorithm>

namespace hucprof {

uint64_t SkippedSamples::update(const std::vector<SampledCpu>& cpus) {
  for (const SampledCpu& c : cpus) {
    if (c.period_ns == 0) continue;
    const auto owed = static_cast<int64_t>(c.clock_ns / c.period_ns);
    const int64_t short_by = owed - static_cast<int64_t>(c.runs);
    // A CPU seen for the first time has nothing to agree with: it counts nothing yet.
    auto [it, first] = cpus_.try_emplace(c.cpu, Cpu{short_by, 0});
    Cpu& cpu = it->second;
    const int64_t agreed = first ? 0 : std::min(cpu.last, short_by);
    cpu.last = short_by;
    if (agreed > 0 && static_cast<uint64_t>(agreed) > cpu.counted) {
      total_ += static_cast<uint64_t>(agreed) - cpu.counted;
      cpu.counted = static_cast<uint64_t>(agreed);
    }
  }
  return total_;
}

}  // namespace hucprof
