#pragma once
#include <cstddef>
#include <cstdint>
#include <cstdio>

#include "hucprof_abi.h"

namespace hucprof::bench {

// The number of commands the benchmarks' samples rotate through: enough that the comm labels
// multiply label sets and profile entries as a busy node's do, within TaskLabels' bound.
inline constexpr size_t kBenchComms = 32;

// A sampling key as the sampler writes it in a daemon: the comm of the task ("job-N", the
// i-th sample's of kBenchComms), so the drain's comm work (naming, interning the label set) is
// measured; tgid 0, as the daemon's keys are (only recordings label pids).
inline huc_sample_key bench_sample_key(uint64_t stack_id, uint64_t round, size_t i) {
  huc_sample_key key{};
  key.stack_id = stack_id;
  key.syscall_nr = 45;
  key.generation = static_cast<uint8_t>(round);
  std::snprintf(key.comm, sizeof(key.comm), "job-%zu", i % kBenchComms);
  return key;
}

}  // namespace hucprof::bench
