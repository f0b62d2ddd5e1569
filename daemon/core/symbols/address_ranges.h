#pragma once
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "core/symbols/kallsyms_index.h"
#include "hucprof_abi.h"

namespace hucprof {

struct AddressRanges {
  std::vector<huc_range> ranges;     // sorted, merged, at most the capacity asked for
  std::vector<std::string> missing;  // names with no symbol on this kernel (inlined, absent)
  size_t overflow = 0;               // ranges that did not fit into that capacity
  size_t capacity = HUC_MAX_RANGES;  // the capacity asked for: the BPF array they are for
};

// The kernel text ranges of every symbol whose normalized name is in `names` (all suffixed
// parts, e.g. __check_object_size and __check_object_size.cold), sorted and with touching
// ranges merged, ready to hand to BPF before load into an array of `capacity` entries.
AddressRanges build_address_ranges(const KallsymsIndex& index,
                                   std::span<const std::string_view> names,
                                   size_t capacity = HUC_MAX_RANGES);

// The same for ranges found some other way (linker section markers): sorted, touching and
// overlapping ranges merged, empty ones dropped, cut to `capacity`.
AddressRanges merge_address_ranges(std::vector<huc_range> ranges, size_t capacity = HUC_MAX_RANGES);

}  // namespace hucprof
