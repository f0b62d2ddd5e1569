#pragma once
#include <algorithm>
#include <cstddef>

#include <iterator>

#include "core/symbols/address_ranges.h"
#include "core/workload/record_target.h"
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

// Hands what `record` follows to a BPF object's rodata (bpf/usercopy_common.bpf.h, huc_followed)
// before load. The planner bounds the lists (core/workload/record_target.h); so does this, by the
// arrays.
template <typename Rodata>
void set_rodata_follow(Rodata& rodata, const FollowFilter& follow) {
  rodata.follow_cgroup_id = follow.cgroup_id;
  const size_t n = std::min(std::size(rodata.follow_tgids), follow.tgids.size());
  std::copy_n(follow.tgids.begin(), n, rodata.follow_tgids);
  rodata.nr_follow_tgids = static_cast<__u32>(n);
  // A CPU past the mask is followed nowhere (never everywhere).
  rodata.follow_cpus = !follow.cpus.empty();
  for (int cpu : follow.cpus) {
    if (cpu < 0 || static_cast<size_t>(cpu) >= HUC_MAX_FOLLOW_CPUS) continue;
    rodata.follow_cpu_mask[cpu / 64] |= 1ULL << (cpu % 64);
  }
}

}  // namespace hucprof
