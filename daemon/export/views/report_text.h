#pragma once
#include <optional>
#include <string>
#include <vector>

#include "core/cost/share_interval.h"
#include "core/cost/usercopy_cost.h"
#include "core/symbols/stack_profile.h"
#include "export/views/report_numbers.h"  // the report's numbers, which its callers print too

namespace hucprof {

// What `hucprof report` prints: where the profile comes from, the headline (the share of busy
// CPU in the checks, with its 95 % interval and samples) and the figures beside it, the call-site
// table (share of busy CPU, samples, CPU seconds, calls and bytes, which steps of the checks ran),
// the workloads that pay, the top stacks of the costliest call sites, and the verdict and the
// prediction, or "collecting" while the samples are too few to decide on
// (core/cost/share_interval.h). Plain text, 100 columns. Every sampled share carries its 95 %
// interval, in the tables as "1.4 % ±0.3"; probe mode's counts are exact and say so.
std::string render_report(const StackProfile& profile, const UsercopyCost& cost,
                          size_t stacks_for_top_callsites = 3);

// The report's first lines: the profile's span, start, kernel and what it measured, and the
// checks' state.
std::string report_header(const StackProfile& profile);

// A table of columns two spaces apart under a header, numbers right-aligned, the last column
// left as it is and wrapped at its ", " (it holds a list). Name columns grow with their names up
// to 32 characters.
struct TextColumn {
  std::string header;
  bool right = false;
};
std::string render_table(const std::vector<TextColumn>& columns,
                         const std::vector<std::vector<std::string>>& rows);

// How sure the headline is: the profile's samples in the checks of its busy samples over its
// span, with `design_effect` (a recorded profile holds no drains to measure one: the least,
// kMinDesignEffect; the web view passes its window's, which /metrics' gauges use).
ShareEstimate headline_estimate(const UsercopyCost& cost, double design_effect = kMinDesignEffect);

// "collecting: 3 samples in the checks, about 42 s more at this rate": how far a share below the
// verdict rule is from one, counting on for `e.needed_span - span`. `longest_span`: the most the
// span can grow to (the daemon's --prediction.window); a verdict that needs more says so.
std::string collecting_words(const ShareEstimate& e, double span,
                             std::optional<double> longest_span = std::nullopt);

// The headline, worded the same in the report and the web view (which sets `lead` apart):
//   decided:    "3.12 % of busy CPU is in the checks (95 % interval 2.77-3.51 %)"
//               ": 251 of 8,084 busy samples (kernel + user, idle left out) over the profile's
//               20.1 s"
//   collecting: collecting_words(...)
//               ": 3 of 250 busy samples (kernel + user, idle left out) over the profile's
//               1.00 s; 95 % interval 0.31-4.63 %, too wide to decide on"
// `window` says what the samples cover ("over the profile's 20.1 s"). The share is the number
// /metrics exports as usercopy_checks_busy_cpu_ratio and pprof -top shows. nullopt without
// sampled busy CPU.
struct Headline {
  std::string lead, detail;
  std::string line() const { return lead + ": " + detail; }
};
std::optional<Headline> headline(const UsercopyCost& cost, const ShareEstimate& estimate,
                                 const std::string& window,
                                 std::optional<double> longest_span = std::nullopt);

// Said in place of the verdict and the prediction while the headline is collecting.
inline constexpr const char* kNoVerdictYet =
    "no verdict or prediction yet (the 95 % interval must be at most half the share: "
    "docs/metrics.md, \"How sure a share is\")";

// The one line a person decides on, e.g. "the checks cost 3.12 % of busy CPU (95 % interval
// 2.77-3.51 %, 0.024 cores); booting with hardened_usercopy=off would save about that much".
// nullopt while the headline is collecting.
std::optional<std::string> verdict_line(const StackProfile& profile, const UsercopyCost& cost,
                                        const ShareEstimate& estimate);
// The speed-up prediction from the headline's share and its interval; nullopt without sampled
// busy CPU, while collecting, or with the checks off.
std::optional<std::string> prediction_line(const StackProfile& profile, const UsercopyCost& cost,
                                           const ShareEstimate& estimate);

// The samples an interrupt took from a check, after their CPU time: "(34 samples): kernel CPU,
// not the checks' (an interrupt or softirq ran on top of a check)".
std::string format_interrupts(const UsercopyCost& cost);

// Which steps of the checks ran, for a table cell: sampling, each step's share of the row's
// samples with its 95 % interval and its samples, "virt_addr_valid 41% ±11 (52), entry 23% ±9
// (29)"; probes, exact step runs per check call, "slab_object 0.90/call, vmap_area 0.10/call".
std::string format_steps(const CallsiteCost& row, bool sampling);

}  // namespace hucprof
