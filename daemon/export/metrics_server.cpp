#include "export/metrics_server.h"

#include <exception>
#include <utility>
#include <vector>

#include <prometheus/exposer.h>

#include "export/civet_routes.h"
#include "export/listen_address.h"

namespace hucprof {
namespace {

std::string flag_error(const std::string& listen_address, const std::string& cause) {
  return "--web.listen-address \"" + listen_address + "\": " + cause;
}

}  // namespace

std::variant<std::unique_ptr<MetricsServer>, std::string> MetricsServer::start(
    const std::string& listen_address, std::shared_ptr<SnapshotCollectable> collectable) {
  auto parsed = parse_listen_address(listen_address);
  if (const auto* error = std::get_if<std::string>(&parsed)) {
    return flag_error(listen_address, *error);
  }
  const auto& address = std::get<ListenAddress>(parsed);
  const std::string spec = civetweb_port_spec(address, ipv6_sockets_available());

  std::unique_ptr<MetricsServer> server(new MetricsServer());
  try {
    server->exposer_ = std::make_unique<prometheus::Exposer>(
        // 4 threads: a ?seconds=N profile request holds one for N seconds.
        std::vector<std::string>{"listening_ports", spec, "num_threads", "4"},
        civet_route_callbacks());
  } catch (const std::exception&) {
    // CivetServer throws "null context ... Possible problem binding to port" whatever went
    // wrong; find out the real cause ourselves.
    return flag_error(listen_address, diagnose_listen_failure(address));
  }
  server->exposer_->RegisterCollectable(collectable, "/metrics");
  // The Exposer holds a weak_ptr; keep the collectable alive as long as we serve it.
  server->collectable_ = std::move(collectable);
  return server;
}

MetricsServer::~MetricsServer() = default;

void MetricsServer::add_route(std::string path, HttpHandler handler) {
  add_civet_route(std::move(path), std::move(handler));
}

int MetricsServer::port() const {
  const auto ports = exposer_->GetListeningPorts();
  return ports.empty() ? 0 : ports.front();
}

}  // namespace hucprof
