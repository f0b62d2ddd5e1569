#pragma once
#include <cstdint>

namespace hucprof {

// A count as a double, for shares and rates (exact up to 2^53, far beyond any count here); one
// spelling of the conversion -Wconversion would otherwise flag at each division.
constexpr double as_double(uint64_t n) { return static_cast<double>(n); }

}  // namespace hucprof
