// libFuzzer target: a debuginfod server is outside input, and what it does reaches hucprof only
// as libdebuginfod's progress reports (how many bytes so far, the size it says). Whatever their
// sequence and timing, a download must be given up at its deadline and never before without a
// reason (the offered or received size past the bound, or a stall window without 100 KiB), and
// every reason is one line.
//   input: records of 10 bytes: milliseconds since the last report (2, little-endian), bytes so
//          far (4, in units of 256), the size the server says (4: 0 none yet, 0xffffffff -1,
//          else in units of 256 KiB).
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string>

#include "core/files/download_watch.h"
#include "fuzz_check.h"

namespace {

using namespace hucprof;
using std::chrono::milliseconds;
using std::chrono::seconds;

uint64_t le(const uint8_t* p, size_t n) {
  uint64_t v = 0;
  for (size_t i = 0; i < n; ++i) v |= uint64_t{p[i]} << (8 * i);
  return v;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  DownloadLimits limits;
  limits.deadline = seconds(600);
  limits.stall_window = seconds(90);
  limits.max_bytes = uint64_t{4} << 30;
  const DownloadWatch::Clock::time_point start{};
  DownloadWatch watch(limits, start);
  auto now = start;
  uint64_t window_bytes = 0;
  auto window_start = start;
  for (size_t at = 0; at + 10 <= size; at += 10) {
    now += milliseconds(le(data + at, 2));
    const long done = static_cast<long>(le(data + at + 2, 4) << 8);
    const uint64_t said = le(data + at + 6, 4);
    const long total = said == 0 ? 0 : said == 0xffffffff ? -1 : static_cast<long>(said << 18);
    const std::string why = watch.progress(now, done, total);
    const uint64_t bytes = total != 0 && done > 0 ? static_cast<uint64_t>(done) : 0;
    // The model of the rule, as docs/reliability.md states it.
    const bool past_deadline = now - start >= limits.deadline;
    const bool too_large =
        (total > 0 && static_cast<uint64_t>(total) > limits.max_bytes) || bytes > limits.max_bytes;
    if (bytes < window_bytes) window_bytes = bytes;
    bool stalled = false;
    if (now - window_start >= limits.stall_window) {
      stalled = bytes - window_bytes < DownloadLimits::kMinBytesPerWindow;
      window_start = now;
      window_bytes = bytes;
    }
    HUC_FUZZ_CHECK(why.empty() == !(past_deadline || too_large || stalled),
                   "given up exactly when a bound is crossed");
    HUC_FUZZ_CHECK(one_line(why), "the reason is one line");
    if (!why.empty()) return 0;  // libdebuginfod stops asking
  }
  return 0;
}
