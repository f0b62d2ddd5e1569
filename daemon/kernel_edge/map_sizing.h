#pragma once
#include <cstdint>
#include <span>
#include <string>

struct bpf_map;

namespace hucprof {

// One map's size as the attach plan decided it, applied between open and load.
struct MapSizing {
  enum Allocation { Preallocated, OnDemand };
  bpf_map* map = nullptr;
  uint32_t max_entries = 0;  // 0: the map is not created at all (no loaded program uses it)
  Allocation allocation = Preallocated;
};

// Applies every sizing; "" when all took, else which map failed and why.
std::string apply_map_sizing(std::span<const MapSizing> sizings);

}  // namespace hucprof
