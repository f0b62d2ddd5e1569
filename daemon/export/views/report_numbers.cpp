#include "export/views/report_numbers.h"

#include <algorithm>
#include <cmath>
#include <cstdio>

#include "core/base/as_double.h"

namespace hucprof {

std::string printf_string(const char* format, double value) {
  char buf[64];
  std::snprintf(buf, sizeof(buf), format, value);
  return buf;
}

std::string format_plus_minus(double pct, const ShareInterval& interval, int decimals) {
  const double scale = std::pow(10.0, decimals);
  const double side = std::max(100 * interval.upper - pct, pct - 100 * interval.lower);
  const double h = std::ceil(std::max(0.0, side) * scale - 1e-9) / scale;
  return "±" + printf_string(decimals == 0 ? "%.0f" : decimals == 1 ? "%.1f" : "%.2f", h);
}

std::string format_share(double fraction) { return printf_string("%.2f %%", 100.0 * fraction); }

std::string format_interval(const ShareInterval& interval) {
  return printf_string("%.2f", 100.0 * interval.lower) + "-" +
         printf_string("%.2f %%", 100.0 * interval.upper);
}

std::string format_percent_pm(double k, double n, double design_effect) {
  const ShareEstimate e = estimate_share(k, n, 0, design_effect);
  const double pct = 100.0 * e.share;
  return format_percent(e.share) + " " + format_plus_minus(pct, e.interval, pct < 1 ? 2 : 1);
}

std::string format_part(uint64_t k, uint64_t n, double design_effect) {
  return format_percent_pm(as_double(k), as_double(n), design_effect) + " (" +
         format_count_exact(k) + ")";
}

std::string format_count_exact(uint64_t n) {
  std::string digits = std::to_string(n), out;
  for (size_t i = 0; i < digits.size(); ++i) {
    if (i && (digits.size() - i) % 3 == 0) out += ',';
    out += digits[i];
  }
  return out;
}

std::string format_percent(double fraction) {
  const double pct = 100.0 * fraction;
  if (pct > 0 && pct < 0.01) return "<0.01 %";
  return printf_string(pct < 1 ? "%.2f %%" : "%.1f %%", pct);
}

std::string format_points(double change) {
  const double pp = 100.0 * change;
  const double magnitude = std::fabs(pp);
  if (magnitude == 0 || magnitude >= 0.005) return printf_string("%+.2f", pp);
  const int decimals = std::min(12, static_cast<int>(-std::floor(std::log10(magnitude))));
  return printf_string(("%+." + std::to_string(decimals) + "f").c_str(), pp);
}

std::string format_count(uint64_t n) {
  const double d = as_double(n);
  if (n < 1000) return std::to_string(n);
  if (n < 1000000) return printf_string("%.1fk", d / 1e3);
  if (n < 1000000000) return printf_string("%.2fM", d / 1e6);
  return printf_string("%.2fG", d / 1e9);
}

std::string format_bytes(uint64_t n) {
  const double d = as_double(n);
  if (n < 1024) return std::to_string(n) + " B";
  if (n < (1u << 20)) return printf_string("%.1f KiB", d / 1024);
  if (n < (1u << 30)) return printf_string("%.1f MiB", d / (1 << 20));
  return printf_string("%.2f GiB", d / (1 << 30));
}

std::string format_seconds(double seconds) {
  return printf_string(seconds < 10 ? "%.3f s" : "%.1f s", seconds);
}

std::string format_wait(double seconds) {
  if (seconds <= 90) return printf_string("%.0f s", std::max(1.0, std::ceil(seconds)));
  if (seconds <= 90 * 60) return printf_string("%.0f min", std::ceil(seconds / 60));
  return printf_string("%.0f h", std::ceil(seconds / 3600));
}

}  // namespace hucprof
