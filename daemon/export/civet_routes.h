#pragma once
#include <string>

#include "export/http_types.h"

struct CivetCallbacks;

namespace hucprof {

// Stop-gap until the new HTTP server: lets the civetweb-based MetricsServer serve HttpHandlers
// (MetricsServer::add_route). prometheus-cpp's Exposer routes nothing but collectables, so
// handlers are answered from civetweb's begin_request hook out of one process-wide table (one
// server per process); "/" falls back to the landing page until a handler takes it.
void add_civet_route(std::string path, HttpHandler handler);

// Callbacks to hand to prometheus::Exposer.
const CivetCallbacks* civet_route_callbacks();

}  // namespace hucprof
