#pragma once
#include <functional>
#include <map>
#include <string>
#include <utility>
#include <vector>

namespace hucprof {

// A request as the daemon's handlers see it, whatever HTTP library serves it: handlers (the
// landing page / web view, profiles, ...) are plain functions of this, unit-tested without a
// socket. The server has already answered everything that is not a GET or HEAD of a registered
// path (405, 404, 401, 400), decoded the path and the query, and will drop the body of a HEAD.
struct HttpRequest {
  std::string method;  // "GET" or "HEAD"
  std::string path;    // percent-decoded, without the query: "/debug/pprof/usercopy"
  std::multimap<std::string, std::string> query;  // percent-decoded query parameters
  std::map<std::string, std::string> headers;     // names lower-cased
  std::string peer;  // the client's IP address, "127.0.0.1" or "::1" ("" when unknown)
  // A handler that waits (e.g. `?seconds=N` profiles) polls this and gives up when it turns
  // true: the client went away or the server is stopping. Never null.
  std::function<bool()> cancelled = [] { return false; };
};

struct HttpResponse {
  int status = 200;
  std::string content_type = "text/plain; charset=utf-8";
  std::string body;
  // Extra headers, e.g. {"Content-Encoding", "gzip"} or {"Content-Disposition", "..."}.
  std::vector<std::pair<std::string, std::string>> headers;
};

// Registered per path with MetricsServer::add_route(path, handler). May block (bounded): the
// server runs each request so that a slow handler never delays other clients or /metrics.
using HttpHandler = std::function<HttpResponse(const HttpRequest&)>;

}  // namespace hucprof
