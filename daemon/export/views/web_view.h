#pragma once
#include <chrono>
#include <functional>
#include <string>

#include "core/base/http_types.h"
#include "core/symbols/stack_profile.h"
#include "hucprof.pb.h"

namespace hucprof {

// What the page at "/" shows, taken fresh for every request.
struct WebViewInput {
  hucprof::v1::Snapshot snapshot;  // the latest: status (probes, kernel, hardened) and counters
  // The drains of the last --prediction.window (ProfileStore::window): the window of
  // usercopy_checks_busy_cpu_ratio, so the page's headline is /metrics' number. The page links
  // its profile by its end: whoever serves the page keeps it (ShownWindows) for that link.
  StackProfile window;
  std::string mode;  // --mode as given ("auto", "probe", "sample")
  std::chrono::milliseconds interval{10000};
  std::chrono::milliseconds prediction_window{300000};
  bool reload = true;                       // false: ?refresh=off, the page stays as it is
  std::string telemetry_path = "/metrics";  // --web.telemetry-path, which the page links to
};

// The live web view: the headline (share of busy CPU in the checks over the prediction window,
// with its samples), mode, kernel, hardened-usercopy state, the figures beside the headline, the
// top call sites with their share, the verdict, the flame graph, and the probe attach table with
// reasons. Server-rendered HTML with inline CSS and inline SVG: no script, no external font, style
// sheet or CDN (nodes are often offline), tables readable with JavaScript off. It reloads itself
// every kReloadSeconds (or --interval when longer) with a <meta> refresh, says when it was
// updated, and ?refresh=off stops that (hovering the flame graph loses nothing then).
inline constexpr int64_t kReloadSeconds = 60;
std::string render_web_view(const WebViewInput& input);

// GET / (HEAD too, the server drops the body): the page, with a Content-Security-Policy that
// forbids anything from elsewhere; `?refresh=off` renders it without the reload, any other
// `refresh` is a 400 naming the problem.
HttpHandler make_web_view_handler(std::function<WebViewInput()> input);

}  // namespace hucprof
