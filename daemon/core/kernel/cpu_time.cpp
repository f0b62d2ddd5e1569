#include "core/kernel/cpu_time.h"

#include "core/base/time_units.h"

namespace hucprof {

uint64_t cpu_clock_period_ns(uint64_t frequency_hz) {
  return frequency_hz == 0 ? 0 : kNanosPerSecond / frequency_hz;
}

double cpu_clock_seconds(uint64_t samples, uint64_t frequency_hz) {
  return static_cast<double>(samples) * static_cast<double>(cpu_clock_period_ns(frequency_hz)) /
         static_cast<double>(kNanosPerSecond);
}

}  // namespace hucprof
