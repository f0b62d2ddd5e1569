#include "core/profile/report_rows.h"

#include <algorithm>
#include <map>

#include "core/base/quoted_value.h"
#include "core/kernel/interrupt_entries.h"

namespace hucprof {

std::string_view sort_key_name(SortKey key) {
  for (const SortKeyName& k : kSortKeyNames) {
    if (k.key == key) return k.name;
  }
  return "";
}

std::string sort_key_list() {
  std::string out;
  for (const SortKeyName& k : kSortKeyNames) {
    out += (out.empty() ? "" : ", ") + std::string(k.name);
  }
  return out;
}

Result<std::vector<SortKey>> parse_sort_keys(std::string_view text) {
  std::vector<SortKey> keys;
  size_t at = 0;
  while (true) {
    const size_t comma = text.find(',', at);
    const std::string_view word =
        text.substr(at, comma == std::string_view::npos ? std::string_view::npos : comma - at);
    if (word.empty()) return Error{"--sort: an empty key in " + quoted_value(text)};
    const auto* found = std::find_if(std::begin(kSortKeyNames), std::end(kSortKeyNames),
                                     [&](const SortKeyName& k) { return k.name == word; });
    if (found == std::end(kSortKeyNames)) {
      return Error{"--sort: unknown key " + quoted_value(word) + " (keys: " + sort_key_list() +
                   ")"};
    }
    if (std::find(keys.begin(), keys.end(), found->key) != keys.end()) {
      return Error{"--sort: " + quoted_value(word) + " given twice"};
    }
    keys.push_back(found->key);
    if (comma == std::string_view::npos) return keys;
    at = comma + 1;
  }
}

std::string label_value(const ProfileLabels& labels, SortKey key) {
  switch (key) {
    case SortKey::Callsite:
      return labels.callsite;
    case SortKey::Syscall:
      return labels.syscall;
    case SortKey::Copy:
      return labels.copy;
    case SortKey::Step:
      return labels.check;
    case SortKey::Workload:
      return labels.workload;
    case SortKey::Comm:
      return labels.comm;
    case SortKey::Pid:
      return labels.pid ? std::to_string(labels.pid) : "";
  }
  return labels.callsite;
}

bool profile_has_key(const StackProfile& profile, SortKey key) {
  return std::any_of(profile.samples.begin(), profile.samples.end(),
                     [&](const ProfileSample& s) { return !label_value(*s.labels, key).empty(); });
}

std::vector<KeyedRow> rows_by_keys(const StackProfile& profile, const std::vector<SortKey>& keys) {
  std::map<std::vector<std::string>, KeyedRow> by_key;
  for (const ProfileSample& s : profile.samples) {
    if (s.values[kSamples] == 0 && s.values[kCalls] == 0) continue;  // sub-check runs
    if (!profile.sampling && s.values[kCalls] == 0) continue;        // samples that do not count
    // Not the checks' time: the same rule as the report's call-site table
    // (core/cost/usercopy_cost).
    if (profile.sampling && s.values[kSamples] && s.stack && interrupt_before_check(*s.stack)) {
      continue;
    }
    std::vector<std::string> key;
    for (SortKey k : keys) key.push_back(label_value(*s.labels, k));
    KeyedRow& row = by_key[key];
    row.key = std::move(key);
    row.samples += s.values[kSamples];
    row.calls += s.values[kCalls];
    row.bytes += s.values[kBytes];
  }
  std::vector<KeyedRow> rows;
  for (auto& [key, row] : by_key) rows.push_back(std::move(row));
  std::stable_sort(rows.begin(), rows.end(), [&](const KeyedRow& a, const KeyedRow& b) {
    return a.rank(profile.sampling) > b.rank(profile.sampling);
  });
  return rows;
}

LimitedRows apply_percent_limit(std::vector<KeyedRow> rows, bool sampling, uint64_t total,
                                double percent) {
  LimitedRows out;
  for (KeyedRow& row : rows) {
    const double share =
        total ? 100.0 * static_cast<double>(row.rank(sampling)) / static_cast<double>(total) : 0;
    if (share < percent) {
      ++out.hidden;
      out.hidden_rank += row.rank(sampling);
    } else {
      out.shown.push_back(std::move(row));
    }
  }
  return out;
}

}  // namespace hucprof
