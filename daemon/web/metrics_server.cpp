#include "web/metrics_server.h"

#include <utility>

#include "core/text/listen_address.h"
#include "export/pprof/gzip_codec.h"
#include "web/http_server.h"
#include "web/landing_page.h"
#include "web/web_security.h"
#include "web_input/accept_encoding.h"

namespace hucprof {
namespace {

// prometheus-cpp's and client_golang's content type for the text format.
constexpr const char* kTextFormat = "text/plain; version=0.0.4; charset=utf-8";

Error flag_error(const std::string& listen_address, const Error& cause) {
  return {"--web.listen-address \"" + listen_address + "\": " + cause.text, cause.exit_code};
}

}  // namespace

HttpResponse healthy_page(const HttpRequest&) {
  HttpResponse response;
  response.body = "hucprof is Healthy.\n";
  return response;
}

HttpResponse ready_page(bool ready) {
  HttpResponse response;
  if (ready) {
    response.body = "hucprof is Ready.\n";
  } else {
    response.status = 503;
    response.body = "hucprof is not ready: its BPF programs are not loaded or not drained yet.\n";
  }
  return response;
}

HttpResponse render_metrics(const SnapshotCollectable& collectable, const HttpRequest& request) {
  HttpResponse response;
  response.content_type = kTextFormat;
  response.body = collectable.render();
  response.headers.emplace_back("Vary", "Accept-Encoding");
  const auto accept = request.headers.find("accept-encoding");
  if (accept != request.headers.end() && accepts_gzip(accept->second)) {
    if (auto compressed = gzip_compress(response.body, GzipLevel::Default)) {
      response.body = std::move(*compressed);
      response.headers.emplace_back("Content-Encoding", "gzip");
    }
  }
  return response;
}

Result<std::unique_ptr<MetricsServer>> MetricsServer::start(
    const WebOptions& options, std::shared_ptr<SnapshotCollectable> collectable) {
  auto bound = bind(options, std::move(collectable));
  if (bound.ok()) bound.value()->serve();
  return bound;
}

void MetricsServer::serve() {
  for (auto& http : servers_) http->serve();
}

Result<std::unique_ptr<MetricsServer>> MetricsServer::bind(
    const WebOptions& options, std::shared_ptr<SnapshotCollectable> collectable) {
  // Every address is checked before any is bound: a typo in the second costs no socket.
  std::vector<ListenAddress> addresses;
  for (const std::string& address :
       options.listen_fds.empty() ? options.listen_addresses : std::vector<std::string>{}) {
    auto parsed = parse_listen_address(address);
    if (!parsed.ok()) return flag_error(address, parsed.error());
    auto resolved = resolve_listen_address(parsed.value());
    if (!resolved.ok()) return flag_error(address, resolved.error());
    addresses.push_back(resolved.value());
  }
  if (addresses.empty() && options.listen_fds.empty()) {
    return Error{"--web.listen-address: no address to serve on"};
  }
  auto security = std::make_shared<WebSecuritySource>();
  if (!options.web_config_file.empty()) {
    auto loaded = WebSecuritySource::load(options.web_config_file);
    if (!loaded.ok()) return loaded.error();
    security = std::move(loaded).value();
  }
  std::unique_ptr<MetricsServer> server(new MetricsServer());
  server->tls_ = security->tls();
  for (size_t i = 0; i < addresses.size(); ++i) {
    auto started = HttpServer::bind(addresses[i], security);
    if (!started.ok()) return flag_error(options.listen_addresses[i], started.error());
    server->servers_.push_back(std::move(started).value());
  }
  for (const int fd : options.listen_fds) {
    auto adopted = HttpServer::adopt(fd, security);
    if (!adopted.ok()) {
      return Error{"--web.systemd-socket: " + adopted.error().text, adopted.error().exit_code};
    }
    server->servers_.push_back(std::move(adopted).value());
  }
  server->collectable_ = std::move(collectable);
  // Scrapes and health checks are answered on the I/O threads (fast, never waiting); pages that
  // may wait get a thread of their own and never delay them.
  const HttpHandler metrics = [collectable = server->collectable_](const HttpRequest& request) {
    return render_metrics(*collectable, request);
  };
  const HttpHandler ready = [flag = server->ready_](const HttpRequest&) {
    return ready_page(flag->load());
  };
  for (auto& http : server->servers_) {
    http->add_route(options.telemetry_path, metrics, RouteLane::Inline);
    http->add_route("/-/healthy", healthy_page, RouteLane::Inline);
    http->add_route("/-/ready", ready, RouteLane::Inline);
  }
  server->add_route("/", make_landing_page(options.telemetry_path));
  return server;
}

Result<std::unique_ptr<MetricsServer>> MetricsServer::start(
    const std::string& listen_address, std::shared_ptr<SnapshotCollectable> collectable) {
  return start(WebOptions{{listen_address}, ""}, std::move(collectable));
}

MetricsServer::~MetricsServer() = default;

void MetricsServer::add_route(std::string path, HttpHandler handler) {
  for (auto& http : servers_) http->add_route(path, handler, RouteLane::Own);
}

void MetricsServer::set_ready() { ready_->store(true); }

int MetricsServer::port() const { return servers_.front()->port(); }

std::string MetricsServer::bound_address() const { return servers_.front()->bound_address(); }

std::vector<std::string> MetricsServer::bound_addresses() const {
  std::vector<std::string> out;
  for (const auto& http : servers_) out.push_back(http->bound_address());
  return out;
}

}  // namespace hucprof
