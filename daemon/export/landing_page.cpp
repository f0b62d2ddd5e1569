#include "export/landing_page.h"

namespace hucprof {

HttpResponse landing_page(const HttpRequest&) {
  HttpResponse response;
  response.content_type = "text/html; charset=utf-8";
  response.body =
      "<!DOCTYPE html>\n"
      "<html><head><meta charset=\"utf-8\"><title>hucprof</title></head>\n"
      "<body><h1>hucprof</h1>\n"
      "<p>Hardened-usercopy profiler: the CPU cost of CONFIG_HARDENED_USERCOPY checks, per "
      "kernel call site.</p>\n"
      "<p><a href=\"metrics\">Metrics</a></p>\n"
      "</body></html>\n";
  return response;
}

}  // namespace hucprof
