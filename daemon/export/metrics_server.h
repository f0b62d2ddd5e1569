#pragma once
#include <memory>
#include <string>
#include <variant>

#include "export/http_types.h"
#include "export/prometheus_exporter.h"

namespace hucprof {

class HttpServer;

// What `hucprof run` serves the web on: --web.listen-address and --web.config.file.
struct WebOptions {
  std::string listen_address;
  std::string web_config_file;  // "": plain HTTP, no authentication
};

// Why the server did not start, in one line naming the flag or file, and the exit code it
// means: 2 for a listen address or web config that cannot work anywhere, 1 for this host
// (port taken, address not here).
struct WebStartError {
  int exit_code = 1;
  std::string message;
};

// /metrics (prometheus-cpp's text format, gzip when the client takes it) and the landing page
// on "/", over HttpServer; other exporters add their pages with add_route.
class MetricsServer {
 public:
  static std::variant<std::unique_ptr<MetricsServer>, WebStartError> start(
      const WebOptions& options, std::shared_ptr<SnapshotCollectable> collectable);
  // Binds and loads the web config like start(), but serves only after serve() (see
  // HttpServer::bind: no thread runs before that).
  static std::variant<std::unique_ptr<MetricsServer>, WebStartError> bind(
      const WebOptions& options, std::shared_ptr<SnapshotCollectable> collectable);
  void serve();
  // Plain HTTP on `listen_address`; the error as a message.
  static std::variant<std::unique_ptr<MetricsServer>, std::string> start(
      const std::string& listen_address, std::shared_ptr<SnapshotCollectable> collectable);
  ~MetricsServer();
  MetricsServer(const MetricsServer&) = delete;
  MetricsServer& operator=(const MetricsServer&) = delete;

  // GET/HEAD `path` -> handler, on a thread of its own per request: it may block (bounded, and
  // polling HttpRequest::cancelled) without delaying /metrics or other clients. "/" is the
  // landing page until someone registers another handler for it.
  void add_route(std::string path, HttpHandler handler);

  // The port actually bound (useful with port 0), and the address ("[::]:9478").
  int port() const;
  std::string bound_address() const;
  bool tls() const { return tls_; }

 private:
  MetricsServer() = default;
  // Declared first so the server (and its handler threads) stops before the collectable goes.
  std::shared_ptr<SnapshotCollectable> collectable_;
  std::unique_ptr<HttpServer> server_;
  bool tls_ = false;
};

// The /metrics handler, pure: the snapshot in the text format, gzipped when Accept-Encoding
// allows it.
HttpResponse render_metrics(const SnapshotCollectable& collectable, const HttpRequest& request);

}  // namespace hucprof
