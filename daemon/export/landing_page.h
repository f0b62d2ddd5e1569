#pragma once
#include <string_view>

#include "export/http_types.h"

namespace hucprof {

// The HTML served on "/": what this is and a link to the metrics, like every Prometheus exporter.
std::string_view landing_page_html();

// The handler MetricsServer registers for "/".
HttpResponse landing_page(const HttpRequest& request);

}  // namespace hucprof
