#pragma once
#include <algorithm>
#include <cstddef>

#include "core/address_ranges.h"
#include "hucprof_abi.h"

namespace hucprof {

// Hands address ranges to a BPF object's rodata array before load, with their count. Bounded by
// the array it writes (helper ranges and the rest have different capacities), so ranges built
// for a larger array can never write past a smaller one.
template <size_t N>
void set_rodata_ranges(huc_range (&dst)[N], __u32* count, const AddressRanges& ranges) {
  const size_t n = std::min(N, ranges.ranges.size());
  std::copy_n(ranges.ranges.begin(), n, dst);
  *count = static_cast<__u32>(n);
}

}  // namespace hucprof
