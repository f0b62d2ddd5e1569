#pragma once
#include <atomic>
#include <memory>
#include <string>
#include <vector>

#include "core/base/http_types.h"
#include "core/base/result.h"
#include "export/metrics/prometheus_exporter.h"

namespace hucprof {

class HttpServer;

// What `hucprof run` serves the web on: --web.listen-address (each alike),
// --web.config.file, --web.telemetry-path, and the sockets of --web.systemd-socket.
struct WebOptions {
  std::vector<std::string> listen_addresses;
  std::string web_config_file;  // "": plain HTTP, no authentication
  std::string telemetry_path = "/metrics";
  // Listening sockets systemd passed (socket activation): served instead of listen_addresses.
  std::vector<int> listen_fds = {};
};

// /metrics (prometheus-cpp's text format, gzip when the client takes it), the landing page on
// "/" and Prometheus' health endpoints /-/healthy and /-/ready, over one HttpServer per listen
// address; other exporters add their pages with add_route.
class MetricsServer {
 public:
  // The error names the flag or file, in one line; its exit code is 2 for a listen address or
  // web config that cannot work anywhere, 1 for this host (port taken, address not here).
  static Result<std::unique_ptr<MetricsServer>> start(
      const WebOptions& options, std::shared_ptr<SnapshotCollectable> collectable);
  // Binds and loads the web config like start(), but serves only after serve() (see
  // HttpServer::bind: no thread runs before that).
  static Result<std::unique_ptr<MetricsServer>> bind(
      const WebOptions& options, std::shared_ptr<SnapshotCollectable> collectable);
  void serve();
  // Plain HTTP on `listen_address`.
  static Result<std::unique_ptr<MetricsServer>> start(
      const std::string& listen_address, std::shared_ptr<SnapshotCollectable> collectable);
  ~MetricsServer();
  MetricsServer(const MetricsServer&) = delete;
  MetricsServer& operator=(const MetricsServer&) = delete;

  // GET/HEAD `path` -> handler, on a thread of its own per request: it may block (bounded, and
  // polling HttpRequest::cancelled) without delaying /metrics or other clients. "/" is the
  // landing page until someone registers another handler for it.
  void add_route(std::string path, HttpHandler handler);

  // /-/ready answers 200 from now on (503 before): `hucprof run` calls it once its programs are
  // loaded and the first drain is done. /-/healthy answers 200 whenever the server runs.
  void set_ready();

  // The port actually bound (useful with port 0), and the address ("[::]:9478"), of the first
  // listener; every listener's address.
  int port() const;
  std::string bound_address() const;
  std::vector<std::string> bound_addresses() const;
  bool tls() const { return tls_; }

 private:
  MetricsServer() = default;
  // Declared first so the server (and its handler threads) stops before the collectable goes.
  std::shared_ptr<SnapshotCollectable> collectable_;
  std::shared_ptr<std::atomic<bool>> ready_ = std::make_shared<std::atomic<bool>>(false);
  std::vector<std::unique_ptr<HttpServer>> servers_;
  bool tls_ = false;
};

// The /metrics handler, pure: the snapshot in the text format, gzipped when Accept-Encoding
// allows it.
HttpResponse render_metrics(const SnapshotCollectable& collectable, const HttpRequest& request);

// /-/healthy and /-/ready, worded as Prometheus words them (web/web.go).
HttpResponse healthy_page(const HttpRequest& request);
HttpResponse ready_page(bool ready);

}  // namespace hucprof
