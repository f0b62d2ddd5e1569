#include "core/address_ranges.h"

#include <algorithm>

namespace hucprof {

AddressRanges build_address_ranges(const KallsymsIndex& index,
                                   std::span<const std::string_view> names) {
  AddressRanges out;
  std::vector<huc_range> all;
  for (std::string_view name : names) {
    auto symbols = index.find_normalized(name);
    if (symbols.empty()) out.missing.emplace_back(name);
    for (const auto& sym : symbols) {
      if (sym.size == 0) continue;
      all.push_back(huc_range{sym.address, sym.address + sym.size});
    }
  }
  std::sort(all.begin(), all.end(),
            [](const huc_range& a, const huc_range& b) { return a.start < b.start; });
  for (const auto& r : all) {
    if (!out.ranges.empty() && r.start <= out.ranges.back().end) {
      out.ranges.back().end = std::max(out.ranges.back().end, r.end);
    } else {
      out.ranges.push_back(r);
    }
  }
  if (out.ranges.size() > HUC_MAX_RANGES) {
    out.overflow = out.ranges.size() - HUC_MAX_RANGES;
    out.ranges.resize(HUC_MAX_RANGES);
  }
  return out;
}

}  // namespace hucprof
