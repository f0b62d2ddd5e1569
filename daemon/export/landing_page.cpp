#include "export/landing_page.h"

#if defined(HUCPROF_LANDING_PAGE) && HUCPROF_LANDING_PAGE
#include <CivetServer.h>
#include <civetweb.h>

#include <cstring>
#endif

namespace hucprof {

std::string_view landing_page_html() {
  return "<!DOCTYPE html>\n"
         "<html><head><meta charset=\"utf-8\"><title>hucprof</title></head>\n"
         "<body><h1>hucprof</h1>\n"
         "<p>Hardened-usercopy profiler: the CPU cost of CONFIG_HARDENED_USERCOPY checks, per "
         "kernel call site.</p>\n"
         "<p><a href=\"metrics\">Metrics</a></p>\n"
         "</body></html>\n";
}

#if defined(HUCPROF_LANDING_PAGE) && HUCPROF_LANDING_PAGE
namespace {

// civetweb calls this for every request before routing; a non-zero return means "answered"
// (the value is the status code for civetweb's access log).
int serve_landing_page(mg_connection* conn) {
  const mg_request_info* request = mg_get_request_info(conn);
  if (request == nullptr || request->local_uri == nullptr ||
      std::strcmp(request->local_uri, "/") != 0) {
    return 0;
  }
  const bool head = std::strcmp(request->request_method, "HEAD") == 0;
  if (!head && std::strcmp(request->request_method, "GET") != 0) return 0;
  const std::string_view body = landing_page_html();
  mg_printf(conn,
            "HTTP/1.1 200 OK\r\n"
            "Content-Type: text/html; charset=utf-8\r\n"
            "Content-Length: %zu\r\n"
            "Connection: close\r\n\r\n",
            body.size());
  if (!head) mg_write(conn, body.data(), body.size());
  return 200;
}

CivetCallbacks make_callbacks() {
  CivetCallbacks callbacks;
  callbacks.begin_request = serve_landing_page;
  return callbacks;
}

}  // namespace

const CivetCallbacks* landing_page_callbacks() {
  static const CivetCallbacks callbacks = make_callbacks();
  return &callbacks;
}
#else
const CivetCallbacks* landing_page_callbacks() { return nullptr; }
#endif

}  // namespace hucprof
