#pragma once
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "core/kallsyms_index.h"
#include "hucprof_abi.h"

namespace hucprof {

struct AddressRanges {
  std::vector<huc_range> ranges;      // sorted, merged, at most HUC_MAX_RANGES
  std::vector<std::string> missing;   // names with no symbol on this kernel (inlined, absent)
  size_t overflow = 0;                // ranges that did not fit into HUC_MAX_RANGES
};

// The kernel text ranges of every symbol whose normalized name is in `names` (all suffixed
// parts, e.g. __check_object_size and __check_object_size.cold), sorted and with touching
// ranges merged, ready to hand to BPF before load.
AddressRanges build_address_ranges(const KallsymsIndex& index,
                                   std::span<const std::string_view> names);

// The same for ranges found some other way (linker section markers): sorted, touching and
// overlapping ranges merged, empty ones dropped, cut to HUC_MAX_RANGES.
AddressRanges merge_address_ranges(std::vector<huc_range> ranges);

}  // namespace hucprof
