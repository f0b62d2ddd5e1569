#include "core/drain/top_k_ranking.h"

#include <algorithm>
#include <vector>

namespace hucprof {

void TopKRanking::add(const std::string& callsite, uint64_t cost) {
  if (callsite == kOtherCallsite) return;
  cumulative_[callsite] += cost;
}

void TopKRanking::rerank() {
  using Entry = const std::pair<const std::string, uint64_t>*;
  std::vector<Entry> entries;
  entries.reserve(cumulative_.size());
  for (const auto& e : cumulative_) entries.push_back(&e);
  size_t keep = std::min(top_k_, entries.size());
  std::partial_sort(entries.begin(), entries.begin() + keep, entries.end(), [](Entry a, Entry b) {
    if (a->second != b->second) return a->second > b->second;
    return a->first < b->first;
  });
  named_.clear();
  for (size_t i = 0; i < keep; ++i) named_.insert(entries[i]->first);
  if (entries.size() <= kMaxCandidates) return;
  const auto kept = entries.begin() + std::max(keep, kMaxCandidates / 2);
  std::nth_element(entries.begin() + keep, kept, entries.end(),
                   [](Entry a, Entry b) { return a->second > b->second; });
  for (auto e = kept; e != entries.end(); ++e) cumulative_.erase(std::string((*e)->first));
}

std::string_view TopKRanking::label(std::string_view callsite) const {
  return named_.contains(callsite) ? callsite : kOtherCallsite;
}

}  // namespace hucprof
