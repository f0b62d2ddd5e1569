#pragma once
#include <atomic>
#include <chrono>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>

#include "core/base/http_types.h"
#include "core/base/result.h"
#include "core/symbols/stack_profile.h"

namespace hucprof {

// Where /debug/pprof/usercopy gets its data.
struct ProfileSource {
  std::function<StackProfile()> cumulative;  // everything so far (as of the last drain)
  std::function<void()> drain_now;           // an extra drain, so a window starts/ends now
  // Called while encoding, where pausing is cheap: waits while a drain runs (DrainGate), so
  // a request never takes CPU from the drain loop. May be empty.
  std::function<void()> pause;
  // The drains of the last --prediction.window (the web view's window); empty: ?window=
  // is refused.
  std::function<StackProfile()> window;
  // The window a web view page showed, by its end (core/profile/shown_windows.h), if still kept;
  // empty: ?end= is refused.
  std::function<std::optional<StackProfile>(int64_t end_unix_ns)> shown_window;
};

struct PprofHandlerLimits {
  int max_seconds = 600;  // ?seconds=N: 1..max_seconds
  // ?seconds= requests waiting at once, and at most one per client address: more get 429 with
  // Retry-After, so two clients cannot keep every window to themselves for ten minutes and a
  // third knows when to come back.
  int max_waiting = 2;
  std::chrono::milliseconds poll{100};  // how often a waiting request checks `cancelled`
  // Waits (tests replace it).
  std::function<void(std::chrono::milliseconds)> sleep;
};

// The ?seconds=N of a profile request: nullopt when absent, N when it is a whole number from 1 to
// max_seconds, else the 400 text naming the problem (the value quoted on one line). Pure, fuzzed.
Result<std::optional<int>> profile_seconds(const std::multimap<std::string, std::string>& query,
                                           int max_seconds);

// What a ?window=prediction request asks for: the window as it stands, or (&end=N, the web
// view's link) the one a page showed, which ended at Unix time N ns.
struct WindowRequest {
  std::optional<int64_t> end_unix_ns;
};
// Whether a profile request asks for the prediction window: nullopt when ?window= is absent,
// else the 400 text naming the problem (another value, given twice, beside ?seconds=, an ?end=
// that is not a whole positive number or comes without ?window=prediction). Pure, fuzzed.
Result<std::optional<WindowRequest>> profile_window(
    const std::multimap<std::string, std::string>& query);

// GET /debug/pprof/usercopy: the cumulative profile. ?window=prediction: the drains of the last
// --prediction.window as of the last drain, the window the web view and the busy-share gauges
// show; with &end=N (the web view's link), exactly the window a page showed, or 410 naming the
// problem once it is no longer kept. ?seconds=N: what happened during the next
// N seconds (a drain at both ends, the difference in between); N outside 1..max_seconds, not a
// whole number or given twice → 400 naming the problem; no window free (see max_waiting) → 429
// with Retry-After, the seconds until one is. Gzipped pprof,
// application/octet-stream, like Go's /debug/pprof/profile.
HttpHandler make_pprof_handler(ProfileSource source, PprofHandlerLimits limits = {});

}  // namespace hucprof
