#include "web/landing_page.h"

#include "export/views/markup_escape.h"

namespace hucprof {

HttpHandler make_landing_page(const std::string& telemetry_path) {
  // Relative links, so the page still works behind a reverse proxy that adds a path prefix.
  const std::string metrics = markup_escape(telemetry_path.substr(1));
  const std::string body =
      "<!DOCTYPE html>\n"
      "<html><head><meta charset=\"utf-8\"><title>hucprof</title></head>\n"
      "<body><h1>hucprof</h1>\n"
      "<p>Hardened-usercopy profiler: the CPU cost of CONFIG_HARDENED_USERCOPY checks, per "
      "kernel call site.</p>\n"
      "<p><a href=\"" +
      metrics + "\">Metrics</a></p>\n" +
      "<p><a href=\"-/healthy\">Health</a> · <a href=\"-/ready\">Readiness</a></p>\n"
      "</body></html>\n";
  return [body](const HttpRequest&) {
    HttpResponse response;
    response.content_type = "text/html; charset=utf-8";
    response.body = body;
    return response;
  };
}

}  // namespace hucprof
