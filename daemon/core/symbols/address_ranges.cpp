#include "core/symbols/address_ranges.h"

#include <algorithm>

namespace hucprof {

AddressRanges merge_address_ranges(std::vector<huc_range> all, size_t capacity) {
  AddressRanges out;
  out.capacity = capacity;
  std::erase_if(all, [](const huc_range& r) { return r.end <= r.start; });
  std::sort(all.begin(), all.end(),
            [](const huc_range& a, const huc_range& b) { return a.start < b.start; });
  for (const auto& r : all) {
    if (!out.ranges.empty() && r.start <= out.ranges.back().end) {
      out.ranges.back().end = std::max(out.ranges.back().end, r.end);
    } else {
      out.ranges.push_back(r);
    }
  }
  if (out.ranges.size() > capacity) {
    out.overflow = out.ranges.size() - capacity;
    out.ranges.resize(capacity);
  }
  return out;
}

AddressRanges build_address_ranges(const KallsymsIndex& index,
                                   std::span<const std::string_view> names, size_t capacity) {
  std::vector<huc_range> all;
  std::vector<std::string> missing;
  for (std::string_view name : names) {
    auto symbols = index.find_normalized(name);
    if (symbols.empty()) missing.emplace_back(name);
    for (const auto& sym : symbols) {
      if (sym.size == 0) continue;
      all.push_back(huc_range{sym.address, sym.address + sym.size});
    }
  }
  AddressRanges out = merge_address_ranges(std::move(all), capacity);
  out.missing = std::move(missing);
  return out;
}

}  // namespace hucprof
