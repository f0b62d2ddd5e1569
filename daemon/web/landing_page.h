#pragma once
#include <string>

#include "core/base/http_types.h"

namespace hucprof {

// The handler MetricsServer registers for "/": what this is and links to the metrics (at
// --web.telemetry-path) and the health endpoints, like every Prometheus exporter.
HttpHandler make_landing_page(const std::string& telemetry_path);

}  // namespace hucprof
