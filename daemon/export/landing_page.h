#pragma once
#include <string_view>

struct CivetCallbacks;

namespace hucprof {

// The HTML served on "/": what this is and a link to the metrics, like every Prometheus exporter.
std::string_view landing_page_html();

// Whether this build serves the landing page. prometheus-cpp's Exposer only routes collectables,
// so "/" is answered from civetweb's begin_request callback, which needs the daemon linked
// against civetweb directly (CMake: HUCPROF_LANDING_PAGE and civetweb::civetweb-cpp). Without
// it "/" is a 404 like any other unknown path.
inline constexpr bool kLandingPageBuilt =
#if defined(HUCPROF_LANDING_PAGE) && HUCPROF_LANDING_PAGE
    true;
#else
    false;
#endif

// Callbacks to hand to prometheus::Exposer: serve the landing page on "/" (GET/HEAD) and leave
// every other request to the registered handlers. nullptr when the landing page is not built.
const CivetCallbacks* landing_page_callbacks();

}  // namespace hucprof
