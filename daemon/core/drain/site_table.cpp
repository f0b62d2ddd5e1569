#include "core/drain/site_table.h"

#include <algorithm>
#include <iterator>
#include <map>
#include <string>
#include <utility>

namespace hucprof {

namespace {

// ABI structs have explicit padding (zeroed by both sides), so their bytes are the key.
template <typename Key>
std::string key_bytes(const Key& key) {
  return std::string(reinterpret_cast<const char*>(&key), sizeof(key));
}

template <typename Count, typename KeyOf, typename Add>
void merge_by_key(std::vector<Count>& counts, KeyOf key_of, Add add) {
  std::map<std::string, size_t> first;
  std::vector<Count> merged;
  merged.reserve(counts.size());
  for (const Count& c : counts) {
    auto [it, fresh] = first.try_emplace(key_bytes(key_of(c)), merged.size());
    if (fresh) {
      merged.push_back(c);
    } else {
      add(merged[it->second], c);
    }
  }
  counts = std::move(merged);
}

}  // namespace

void add_classified_subchecks(const huc_site_key& site, const __u64 (&ended_at)[HUC_CLASSIFY_ENDS],
                              std::vector<RawSubcheckCount>& subchecks) {
  const uint64_t on_stack = ended_at[HUC_END_STACK], vmalloc = ended_at[HUC_END_VMALLOC];
  const uint64_t page = ended_at[HUC_END_PAGE], slab = ended_at[HUC_END_SLAB];
  // check_stack_object runs for every one; __virt_addr_valid for those that went on to the
  // page; __check_heap_object for slab folios only.
  const std::pair<uint32_t, uint64_t> by_kind[] = {
      {HUC_CHECK_SLAB, slab},
      {HUC_CHECK_VMALLOC, vmalloc},
      {HUC_CHECK_STACK, on_stack + vmalloc + page + slab},
      {HUC_CHECK_PAGE, page + slab},
  };
  for (const auto& [kind, count] : by_kind) {
    if (count) subchecks.push_back({{site, kind, 0}, count});
  }
}

void add_table_sites(const huc_site_table& table, uint32_t retired,
                     std::vector<RawSiteCount>& sites, std::vector<RawSubcheckCount>& subchecks) {
  for (const huc_site_slot& slot : table.slots[retired & 1]) {
    if (slot.seq != retired || slot.value.calls == 0) continue;
    RawSiteCount site{slot.key, slot.value.calls, slot.value.bytes, slot.value.full_stack_id};
    std::copy(std::begin(slot.value.ended_at), std::end(slot.value.ended_at),
              site.ended_at.begin());
    sites.push_back(site);
    add_classified_subchecks(slot.key, slot.value.ended_at, subchecks);
  }
}

void merge_equal_keys(std::vector<RawSiteCount>& sites) {
  merge_by_key(
      sites, [](const RawSiteCount& c) { return c.key; },
      [](RawSiteCount& into, const RawSiteCount& c) {
        into.calls += c.calls;
        into.bytes += c.bytes;
        for (size_t i = 0; i < into.ended_at.size(); ++i) into.ended_at[i] += c.ended_at[i];
        if (!into.full_stack_id) into.full_stack_id = c.full_stack_id;
      });
}

void merge_equal_keys(std::vector<RawSubcheckCount>& subchecks) {
  merge_by_key(
      subchecks, [](const RawSubcheckCount& c) { return c.key; },
      [](RawSubcheckCount& into, const RawSubcheckCount& c) { into.count += c.count; });
}

}  // namespace hucprof
