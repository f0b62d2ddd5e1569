#pragma once
#include <optional>
#include <string>

#include "core/stack_profile.h"
#include "core/usercopy_cost.h"

namespace hucprof {

// What `hucprof report` prints: where the profile comes from, the headline (the share of busy
// CPU in the checks) and the figures beside it, the cost table (call site, syscall, share of
// busy CPU, CPU seconds, calls and bytes, which check ran), the top stacks of the costliest call
// sites, and the verdict. Plain text, 100 columns.
std::string render_report(const StackProfile& profile, const UsercopyCost& cost,
                          size_t stacks_for_top_callsites = 3);

// The headline, worded the same in the report and the web view: the share of busy CPU (kernel +
// user, idle left out) inside the checks, with its samples and `window` ("over the profile's
// 20.1 s"): "3.12 % of busy CPU is in the checks: 251 of 8,084 busy samples (kernel + user,
// idle left out) over the profile's 20.1 s". The number /metrics exports as
// usercopy_checks_busy_cpu_ratio and pprof -top shows. nullopt without sampled busy CPU.
std::optional<std::string> headline(const UsercopyCost& cost, const std::string& window);

// The one line a person decides on, e.g. "the checks cost 3.12 % of busy CPU (0.024 cores);
// booting with hardened_usercopy=off would save about that much".
std::string verdict_line(const StackProfile& profile, const UsercopyCost& cost);
// The speed-up prediction from the headline's share; nullopt without sampled busy CPU or with
// the checks off.
std::optional<std::string> prediction_line(const StackProfile& profile, const UsercopyCost& cost);

// The samples an interrupt took from a check, after their CPU time: "(34 samples): kernel CPU,
// not the checks' (an interrupt or softirq ran on top of a check)".
std::string format_interrupts(const UsercopyCost& cost);

// Which check ran, for a table cell: "object 60%, slab 40%" (sampling: share of the row's CPU)
// or "slab 0.90/call, vmalloc 0.10/call" (probes: sub-check runs per check call).
std::string format_checks(const CallsiteCost& row, bool sampling);

// Number formatting shared by the report and the web view.
std::string format_percent(double fraction);  // "5.8 %", "0.04 %", "<0.01 %"
std::string format_share(double fraction);    // the headline's: "3.12 %", "0.04 %", as pprof
std::string format_count_exact(uint64_t n);   // "8,084"
std::string format_count(uint64_t n);         // "950", "12.3k", "4.56M"
std::string format_bytes(uint64_t n);         // "512 B", "62.5 KiB", "1.2 GiB"
std::string format_seconds(double seconds);   // "0.505 s", "12.3 s"

}  // namespace hucprof
