#include "web/metrics_server.h"

#include <utility>

#include "core/listen_address.h"
#include "export/gzip_codec.h"
#include "web/accept_encoding.h"
#include "web/http_server.h"
#include "web/landing_page.h"
#include "web/web_security.h"

namespace hucprof {
namespace {

// prometheus-cpp's and client_golang's content type for the text format.
constexpr const char* kTextFormat = "text/plain; version=0.0.4; charset=utf-8";

std::string flag_error(const std::string& listen_address, const std::string& cause) {
  return "--web.listen-address \"" + listen_address + "\": " + cause;
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

std::variant<std::unique_ptr<MetricsServer>, WebStartError> MetricsServer::start(
    const WebOptions& options, std::shared_ptr<SnapshotCollectable> collectable) {
  auto bound = bind(options, std::move(collectable));
  if (auto* server = std::get_if<std::unique_ptr<MetricsServer>>(&bound)) (*server)->serve();
  return bound;
}

void MetricsServer::serve() {
  for (auto& http : servers_) http->serve();
}

std::variant<std::unique_ptr<MetricsServer>, WebStartError> MetricsServer::bind(
    const WebOptions& options, std::shared_ptr<SnapshotCollectable> collectable) {
  // Every address is checked before any is bound: a typo in the second costs no socket.
  std::vector<ListenAddress> addresses;
  for (const std::string& address :
       options.listen_fds.empty() ? options.listen_addresses : std::vector<std::string>{}) {
    auto parsed = parse_listen_address(address);
    if (!parsed.ok()) return WebStartError{2, flag_error(address, parsed.error().text)};
    auto resolved = resolve_listen_address(parsed.value());
    if (const auto* error = std::get_if<std::string>(&resolved)) {
      return WebStartError{2, flag_error(address, *error)};
    }
    addresses.push_back(std::get<ListenAddress>(resolved));
  }
  if (addresses.empty() && options.listen_fds.empty()) {
    return WebStartError{2, "--web.listen-address: no address to serve on"};
  }
  auto security = std::make_shared<WebSecuritySource>();
  if (!options.web_config_file.empty()) {
    auto loaded = WebSecuritySource::load(options.web_config_file);
    if (auto* error = std::get_if<std::string>(&loaded)) return WebStartError{2, *error};
    security = std::move(std::get<std::unique_ptr<WebSecuritySource>>(loaded));
  }
  std::unique_ptr<MetricsServer> server(new MetricsServer());
  server->tls_ = security->tls();
  for (size_t i = 0; i < addresses.size(); ++i) {
    auto started = HttpServer::bind(addresses[i], security);
    if (auto* error = std::get_if<std::string>(&started)) {
      return WebStartError{1, flag_error(options.listen_addresses[i], *error)};
    }
    server->servers_.push_back(std::move(std::get<std::unique_ptr<HttpServer>>(started)));
  }
  for (const int fd : options.listen_fds) {
    auto adopted = HttpServer::adopt(fd, security);
    if (auto* error = std::get_if<std::string>(&adopted)) {
      return WebStartError{1, "--web.systemd-socket: " + *error};
    }
    server->servers_.push_back(std::move(std::get<std::unique_ptr<HttpServer>>(adopted)));
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

std::variant<std::unique_ptr<MetricsServer>, std::string> MetricsServer::start(
    const std::string& listen_address, std::shared_ptr<SnapshotCollectable> collectable) {
  auto started = start(WebOptions{{listen_address}, ""}, std::move(collectable));
  if (auto* error = std::get_if<WebStartError>(&started)) return error->message;
  return std::move(std::get<std::unique_ptr<MetricsServer>>(started));
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
