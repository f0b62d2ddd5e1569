#include "core/site_table.h"

#include <map>
#include <string>

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

void add_table_sites(const huc_site_table& table, uint32_t retired,
                     std::vector<RawSiteCount>& sites, std::vector<RawSubcheckCount>& subchecks) {
  for (const huc_site_slot& slot : table.slots[retired & 1]) {
    if (slot.seq != retired || slot.value.calls == 0) continue;
    sites.push_back({slot.key, slot.value.calls, slot.value.bytes, slot.value.full_stack_id});
    for (uint32_t kind = 0; kind < HUC_CHECK_KINDS; ++kind) {
      if (slot.value.classified[kind]) {
        subchecks.push_back({{slot.key, kind, 0}, slot.value.classified[kind]});
      }
    }
  }
}

void merge_equal_keys(std::vector<RawSiteCount>& sites) {
  merge_by_key(
      sites, [](const RawSiteCount& c) { return c.key; },
      [](RawSiteCount& into, const RawSiteCount& c) {
        into.calls += c.calls;
        into.bytes += c.bytes;
        if (!into.full_stack_id) into.full_stack_id = c.full_stack_id;
      });
}

void merge_equal_keys(std::vector<RawSubcheckCount>& subchecks) {
  merge_by_key(
      subchecks, [](const RawSubcheckCount& c) { return c.key; },
      [](RawSubcheckCount& into, const RawSubcheckCount& c) { into.count += c.count; });
}

}  // namespace hucprof
