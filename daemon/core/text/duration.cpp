#include "core/text/duration.h"

#include <array>
#include <cstdint>
#include <optional>

#include "core/base/message_text.h"
#include "core/base/text_chars.h"

namespace hucprof {
namespace {

struct Unit {
  std::string_view name;
  uint64_t nanoseconds;
};

// Longest names first so "ms" is not read as "m" followed by garbage.
constexpr std::array<Unit, 8> kUnits{{
    {"ns", 1},
    {"us", 1'000},
    {"\xC2\xB5s", 1'000},  // µs (U+00B5 MICRO SIGN), as Go accepts
    {"\xCE\xBCs", 1'000},  // μs (U+03BC GREEK SMALL LETTER MU)
    {"ms", 1'000'000},
    {"s", 1'000'000'000},
    {"m", 60'000'000'000},
    {"h", 3'600'000'000'000},
}};

constexpr uint64_t kNanosPerMilli = 1'000'000;

std::optional<Unit> take_unit(std::string_view& rest) {
  std::optional<Unit> best;
  for (const Unit& unit : kUnits) {
    if (rest.substr(0, unit.name.size()) == unit.name &&
        (!best || unit.name.size() > best->name.size())) {
      best = unit;
    }
  }
  if (best) rest.remove_prefix(best->name.size());
  return best;
}

}  // namespace

Result<std::chrono::milliseconds> parse_duration(std::string_view text) {
  const std::string shown = in_quotes(text);
  const std::string not_a_duration = shown + " is not a duration (e.g. 10s, 500ms, 1m30s)";
  if (text == "0") return std::chrono::milliseconds(0);
  if (text.empty()) return Error{not_a_duration};

  std::string_view rest = text;
  unsigned __int128 total_ns = 0;  // 128 bits: overflow is checked once, at the end
  bool fraction_lost = false;
  while (!rest.empty()) {
    uint64_t whole = 0;
    bool digits = false;
    for (; !rest.empty() && is_digit(rest.front()); rest.remove_prefix(1)) {
      if (whole > (UINT64_MAX - 9) / 10) return Error{shown + " is too long"};
      whole = whole * 10 + static_cast<uint64_t>(rest.front() - '0');
      digits = true;
    }
    uint64_t fraction = 0, scale = 1;
    if (!rest.empty() && rest.front() == '.') {
      rest.remove_prefix(1);
      for (; !rest.empty() && is_digit(rest.front()); rest.remove_prefix(1)) {
        digits = true;
        if (scale > UINT64_MAX / 100) continue;  // beyond 18 decimals: nanoseconds don't care
        fraction = fraction * 10 + static_cast<uint64_t>(rest.front() - '0');
        scale *= 10;
      }
    }
    if (!digits) return Error{not_a_duration};
    if (rest.empty()) return Error{shown + " has no unit (use ms, s, m or h, e.g. 10s)"};
    const auto unit = take_unit(rest);
    if (!unit) return Error{not_a_duration};
    const unsigned __int128 fraction_ns =
        static_cast<unsigned __int128>(fraction) * unit->nanoseconds;
    if (fraction_ns % scale != 0) fraction_lost = true;
    total_ns += static_cast<unsigned __int128>(whole) * unit->nanoseconds + fraction_ns / scale;
    if (total_ns > static_cast<unsigned __int128>(INT64_MAX)) return Error{shown + " is too long"};
  }
  if (fraction_lost || total_ns % kNanosPerMilli != 0) {
    return Error{shown + " is finer than a millisecond"};
  }
  return std::chrono::milliseconds(static_cast<int64_t>(total_ns / kNanosPerMilli));
}

Result<std::chrono::milliseconds> parse_duration_within(
    std::string_view text, std::chrono::milliseconds min,
    std::optional<std::chrono::milliseconds> max) {
  auto parsed = parse_duration(text);
  if (!parsed.ok()) return parsed;
  const auto duration = parsed.value();
  if (max && (duration < min || duration > *max)) {
    return Error{in_quotes(text) + " is out of range " + format_duration(min) + ".." +
                 format_duration(*max)};
  }
  if (duration < min)
    return Error{in_quotes(text) + " is below the minimum of " + format_duration(min)};
  return duration;
}

std::string format_duration(std::chrono::milliseconds duration) {
  int64_t ms = duration.count();
  if (ms == 0) return "0s";
  std::string out;
  const auto part = [&](int64_t unit_ms, const char* name) {
    if (ms >= unit_ms) {
      out += std::to_string(ms / unit_ms) + name;
      ms %= unit_ms;
    }
  };
  part(3'600'000, "h");
  part(60'000, "m");
  part(1'000, "s");
  part(1, "ms");
  return out;
}

}  // namespace hucprof
