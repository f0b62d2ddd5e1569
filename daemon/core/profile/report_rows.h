#pragma once
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "core/base/result.h"
#include "core/symbols/stack_profile.h"

namespace hucprof {

// `hucprof report --sort KEYS`: the checks' samples (or, without sampling, calls) summed by the
// labels a person names, like `perf report --sort comm,dso,sym`. Pure: a profile in, rows out.

enum class SortKey { Callsite, Syscall, Copy, Step, Workload, Comm, Pid };

// The names --sort takes, in the order docs/profiles.md lists them.
struct SortKeyName {
  SortKey key;
  std::string_view name;
  std::string_view label;  // the pprof label the key reads
};
inline constexpr SortKeyName kSortKeyNames[] = {
    {SortKey::Callsite, "callsite", "callsite"},
    {SortKey::Syscall, "syscall", "syscall"},
    {SortKey::Copy, "copy", "copy"},
    {SortKey::Step, "step", "step"},
    {SortKey::Workload, "workload", "workload"},
    {SortKey::Comm, "comm", "comm"},
    {SortKey::Pid, "pid", "pid"},
};

// "callsite,syscall" into keys: each known once, none empty. The error names the bad key and
// the known ones (exit 2).
Result<std::vector<SortKey>> parse_sort_keys(std::string_view text);
std::string_view sort_key_name(SortKey key);
// "callsite, syscall, copy, step, workload, comm, pid"
std::string sort_key_list();

// A sample's value of one key (a pid in decimal); "" where the profile does not carry it.
std::string label_value(const ProfileLabels& labels, SortKey key);

// One row: the keys' values (in the keys' order) and what its samples count.
struct KeyedRow {
  std::vector<std::string> key;
  uint64_t samples = 0, calls = 0, bytes = 0;
  // What the rows are ranked by: samples in a sampled profile, else calls.
  uint64_t rank(bool sampling) const { return sampling ? samples : calls; }
};

// The profile's check samples summed by `keys`, largest first (ties: by the keys' values).
// Sub-check runs (probe mode's kSubchecks) are not rows: they are steps inside a call.
std::vector<KeyedRow> rows_by_keys(const StackProfile& profile, const std::vector<SortKey>& keys);

// Whether any sample carries a value for `key` (comm: only sampled profiles of this version or
// later; pid: only recordings among them).
bool profile_has_key(const StackProfile& profile, SortKey key);

// `--percent-limit PCT`: rows whose share of `total` is below `percent` go; how many and what
// they sum to is said beside the table.
struct LimitedRows {
  std::vector<KeyedRow> shown;
  size_t hidden = 0;
  uint64_t hidden_rank = 0;  // the hidden rows' samples (or calls)
};
LimitedRows apply_percent_limit(std::vector<KeyedRow> rows, bool sampling, uint64_t total,
                                double percent);

}  // namespace hucprof
