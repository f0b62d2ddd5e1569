#pragma once
#include <chrono>
#include <functional>
#include <string>

#include "core/stack_profile.h"
#include "export/http_types.h"
#include "hucprof.pb.h"

namespace hucprof {

// What the page at "/" shows, taken fresh for every request.
struct WebViewInput {
  hucprof::v1::Snapshot snapshot;  // the latest: status (probes, kernel, hardened) and counters
  StackProfile last_interval;      // the stacks of the last drain interval
  std::string mode;                // --mode as given ("auto", "probe", "sample")
  std::chrono::milliseconds interval{10000};
  std::string telemetry_path = "/metrics";  // --web.telemetry-path, which the page links to
};

// The live web view: mode, kernel, hardened-usercopy state, the probe attach table with reasons,
// the top call sites of the last interval with their share, the verdict, and the flame graph of
// the last interval. Server-rendered HTML with inline CSS and inline SVG: no script, no external
// font, style sheet or CDN (nodes are often offline), tables readable with JavaScript off. It
// reloads itself every interval (a <meta> refresh, no script).
std::string render_web_view(const WebViewInput& input);

// GET / (HEAD too, the server drops the body): the page, with a Content-Security-Policy that
// forbids anything from elsewhere.
HttpHandler make_web_view_handler(std::function<WebViewInput()> input);

}  // namespace hucprof
