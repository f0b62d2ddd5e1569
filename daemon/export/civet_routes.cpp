#include "export/civet_routes.h"

#include <CivetServer.h>
#include <civetweb.h>

#include <cstring>
#include <map>
#include <mutex>
#include <string_view>

#include "export/landing_page.h"

namespace hucprof {

namespace {

struct Routes {
  std::mutex mutex;
  std::map<std::string, HttpHandler> handlers;
};

Routes& routes() {
  static Routes r;
  return r;
}

std::string url_decode(std::string_view s) {
  std::string out(s.size() + 1, '\0');
  const int n = mg_url_decode(s.data(), static_cast<int>(s.size()), out.data(),
                              static_cast<int>(out.size()), 1);
  out.resize(n < 0 ? 0 : static_cast<size_t>(n));
  return out;
}

std::multimap<std::string, std::string> parse_query(const char* query) {
  std::multimap<std::string, std::string> out;
  if (query == nullptr) return out;
  std::string_view rest(query);
  while (!rest.empty()) {
    const size_t amp = rest.find('&');
    std::string_view pair = rest.substr(0, amp);
    rest = amp == std::string_view::npos ? std::string_view{} : rest.substr(amp + 1);
    if (pair.empty()) continue;
    const size_t eq = pair.find('=');
    out.emplace(url_decode(pair.substr(0, eq)),
                eq == std::string_view::npos ? "" : url_decode(pair.substr(eq + 1)));
  }
  return out;
}

const char* reason_phrase(int status) {
  switch (status) {
    case 200: return "OK";
    case 400: return "Bad Request";
    case 404: return "Not Found";
    case 429: return "Too Many Requests";
    case 503: return "Service Unavailable";
    default: return status < 400 ? "OK" : "Error";
  }
}

void write_response(mg_connection* conn, const HttpResponse& r, bool head) {
  std::string headers = "HTTP/1.1 " + std::to_string(r.status) + " " + reason_phrase(r.status) +
                        "\r\nContent-Type: " + r.content_type +
                        "\r\nContent-Length: " + std::to_string(r.body.size()) +
                        "\r\nConnection: close\r\n";
  for (const auto& [name, value] : r.headers) headers += name + ": " + value + "\r\n";
  headers += "\r\n";
  mg_write(conn, headers.data(), headers.size());
  if (!head) mg_write(conn, r.body.data(), r.body.size());
}

// Non-zero: answered (civetweb logs the value as the status).
int serve_route(mg_connection* conn) {
  const mg_request_info* request = mg_get_request_info(conn);
  if (request == nullptr || request->local_uri == nullptr) return 0;
  const bool head = std::strcmp(request->request_method, "HEAD") == 0;
  if (!head && std::strcmp(request->request_method, "GET") != 0) return 0;
  HttpHandler handler;
  {
    std::lock_guard lock(routes().mutex);
    auto it = routes().handlers.find(request->local_uri);
    if (it != routes().handlers.end()) handler = it->second;
  }
  if (!handler) {
    if (std::strcmp(request->local_uri, "/") != 0) return 0;
    const std::string_view page = landing_page_html();
    write_response(conn, HttpResponse{200, "text/html; charset=utf-8", std::string(page), {}},
                   head);
    return 200;
  }
  HttpRequest req;
  req.method = request->request_method;
  req.path = request->local_uri;
  req.query = parse_query(request->query_string);
  for (int i = 0; i < request->num_headers; ++i) {
    std::string name = request->http_headers[i].name;
    for (char& c : name) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    req.headers[name] = request->http_headers[i].value;
  }
  HttpResponse response;
  try {
    response = handler(req);
  } catch (const std::exception& ex) {
    response = HttpResponse{500, "text/plain; charset=utf-8",
                            std::string("internal error: ") + ex.what() + "\n", {}};
  }
  write_response(conn, response, head);
  return response.status;
}

CivetCallbacks make_callbacks() {
  CivetCallbacks callbacks;
  callbacks.begin_request = serve_route;
  return callbacks;
}

}  // namespace

void add_civet_route(std::string path, HttpHandler handler) {
  std::lock_guard lock(routes().mutex);
  routes().handlers[std::move(path)] = std::move(handler);
}

const CivetCallbacks* civet_route_callbacks() {
  static const CivetCallbacks callbacks = make_callbacks();
  return &callbacks;
}

}  // namespace hucprof
