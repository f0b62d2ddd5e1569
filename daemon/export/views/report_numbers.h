#pragma once
#include <cstdint>
#include <string>

#include "core/cost/share_interval.h"

namespace hucprof {

// How the report and the web view write numbers: shares with their 95 % intervals, counts,
// sizes and times, each in one spelling wherever it is shown.
std::string format_percent(double fraction);  // "5.8 %", "0.04 %", "<0.01 %"
std::string format_share(double fraction);    // the headline's: "3.12 %", "0.04 %", as pprof
// A sampled share k of n with its 95 % interval (Wilson's, at the least design effect unless
// given), as the tables print it: "1.4 % ±0.3", "0.52 % ±0.14". The ± is the larger of the
// interval's two sides, rounded up at the share's precision.
std::string format_percent_pm(double k, double n, double design_effect = kMinDesignEffect);
// The same with its own samples, for a part that has no samples column: "76.3 % ±4.5 (450)".
std::string format_part(uint64_t k, uint64_t n, double design_effect = kMinDesignEffect);
std::string format_interval(const ShareInterval& interval);  // "2.77-3.51 %"
std::string format_count_exact(uint64_t n);                  // "8,084"
std::string format_count(uint64_t n);                        // "950", "12.3k", "4.56M"
std::string format_bytes(uint64_t n);                        // "512 B", "62.5 KiB", "1.2 GiB"
std::string format_seconds(double seconds);                  // "0.505 s", "12.3 s"
std::string format_wait(double seconds);                     // "42 s", "8 min", "3 h"
// A change of share in percentage points, signed, two decimals: "+0.45", "-1.20", "+0.00".
// Nonzero, it is never written as 0: nearer 0 than 0.005 pp it shows its first significant
// digit ("-0.003"), so an interval that excludes 0 (a change beyond noise) never reads as
// reaching it.
std::string format_points(double change);

// "±0.3": h at `decimals` for an interval around `pct` (both in percent), the larger side,
// rounded up.
std::string format_plus_minus(double pct, const ShareInterval& interval, int decimals);
// One number through a printf format ("%.3f"): what every formatter above is made of.
std::string printf_string(const char* format, double value);

}  // namespace hucprof
