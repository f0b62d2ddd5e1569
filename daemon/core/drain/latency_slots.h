#pragma once
#include <cstddef>
#include <cstdint>

namespace hucprof {

// Latency is kept in log2 slots only (slot i: floor(log2(ns)) == i). Where a time is needed,
// each call counts at its slot's midpoint, 1.5 * 2^i ns; 0 past the slots a u64 can hold.
inline uint64_t latency_slot_midpoint_ns(size_t slot) {
  constexpr size_t kMaxShift = 62;  // beyond this a midpoint does not fit in 64 bits
  return slot < kMaxShift ? (uint64_t{3} << slot) / 2 : 0;
}

}  // namespace hucprof
