#pragma once
#include "export/http_types.h"

namespace hucprof {

// The handler MetricsServer registers for "/": what this is and a link to the metrics, like
// every Prometheus exporter.
HttpResponse landing_page(const HttpRequest& request);

}  // namespace hucprof
