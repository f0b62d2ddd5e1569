#include "core/kernel/cpu_time.h"

#include "core/base/time_units.h"

namespace hucprof {

uint64_t cpu_clock_period_ns(uint64_t frequency_hz) {
  return frequency_hz == 0 ? 0 : kNanosPerSecond / frequency_hz;
}

uint64_t cpu_clock_period_ns_on(uint64_t frequency_hz, size_t sampled_index) {
  const uint64_t nominal = cpu_clock_period_ns(frequency_hz);
  // In whole half steps, so that the eight periods are exactly a step apart and centred, and
  // alternating around the nominal one, so that the first few CPUs are centred too: -1, +1,
  // -3, +3, ... half steps.
  const auto half_step = static_cast<int64_t>(nominal / (2 * kSamplingPeriodStepFraction));
  const auto k = static_cast<int64_t>(sampled_index % kSamplingPeriodSteps);
  const int64_t half_steps = (k / 2 * 2 + 1) * (k % 2 == 0 ? -1 : 1);
  const int64_t offset = half_steps * half_step;
  return static_cast<uint64_t>(static_cast<int64_t>(nominal) + offset);
}

double cpu_clock_seconds(uint64_t samples, uint64_t frequency_hz) {
  return static_cast<double>(samples) * static_cast<double>(cpu_clock_period_ns(frequency_hz)) /
         static_cast<double>(kNanosPerSecond);
}

}  // namespace hucprof
