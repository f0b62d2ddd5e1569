#pragma once
#include <memory>
#include <string>
#include <variant>

#include "export/http_types.h"
#include "export/prometheus_exporter.h"

namespace prometheus {
class Exposer;
}

namespace hucprof {

// Serves /metrics (and a small landing page on /) on listen_address ("host:port", "[::1]:port"
// or ":port"). start() returns an error in words instead of throwing when the address is bad or
// taken, so `hucprof run` can exit non-zero naming --web.listen-address.
class MetricsServer {
 public:
  static std::variant<std::unique_ptr<MetricsServer>, std::string> start(
      const std::string& listen_address, std::shared_ptr<SnapshotCollectable> collectable);
  ~MetricsServer();
  MetricsServer(const MetricsServer&) = delete;
  MetricsServer& operator=(const MetricsServer&) = delete;

  // The port actually bound (useful with port 0).
  int port() const;

  // Serves GET and HEAD of exactly `path` (not /metrics) with `handler`.
  void add_route(std::string path, HttpHandler handler);

 private:
  MetricsServer() = default;
  // Declared first so the server (and its scrape threads) stops before the collectable goes.
  std::shared_ptr<SnapshotCollectable> collectable_;
  std::unique_ptr<prometheus::Exposer> exposer_;
};

}  // namespace hucprof
