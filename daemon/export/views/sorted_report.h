#pragma once
#include <optional>
#include <string>
#include <vector>

#include "core/profile/report_rows.h"
#include "core/symbols/stack_profile.h"

namespace hucprof {

// `hucprof report --sort KEYS` / `--percent-limit PCT`: the report's header and headline, then
// the checks' samples (calls without sampling) by the keys, largest first, each with its share
// of busy CPU and 95 % interval as the call-site table gives it. Rows below `percent_limit` (of
// busy samples; of all calls without sampling) are left out and counted in a line below.
std::string render_sorted_report(const StackProfile& profile, const std::vector<SortKey>& keys,
                                 std::optional<double> percent_limit);

// `hucprof report --diff BASE`: the headline's share in both and its change, then per row of
// `keys` (call sites by default), its share of busy CPU
// in `base` and in `current`, the change with its 95 % interval (core/cost/share_difference.h) and
// "*" where that interval excludes 0. Rows below `percent_limit` in both profiles are left out
// and counted. Both profiles must be sampled: the caller checks.
std::string render_diff_report(const StackProfile& base, const std::string& base_name,
                               const StackProfile& current, const std::string& current_name,
                               const std::vector<SortKey>& keys,
                               std::optional<double> percent_limit);

}  // namespace hucprof
