#include "export/metrics_server.h"

#include <utility>

#include "core/listen_address.h"
#include "export/accept_encoding.h"
#include "export/gzip_codec.h"
#include "export/http_server.h"
#include "export/landing_page.h"
#include "export/web_security.h"

namespace hucprof {
namespace {

// prometheus-cpp's and client_golang's content type for the text format.
constexpr const char* kTextFormat = "text/plain; version=0.0.4; charset=utf-8";

std::string flag_error(const std::string& listen_address, const std::string& cause) {
  return "--web.listen-address \"" + listen_address + "\": " + cause;
}

}  // namespace

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

void MetricsServer::serve() { server_->serve(); }

std::variant<std::unique_ptr<MetricsServer>, WebStartError> MetricsServer::bind(
    const WebOptions& options, std::shared_ptr<SnapshotCollectable> collectable) {
  auto parsed = parse_listen_address(options.listen_address);
  if (const auto* error = std::get_if<std::string>(&parsed)) {
    return WebStartError{2, flag_error(options.listen_address, *error)};
  }
  auto resolved = resolve_listen_address(std::get<ListenAddress>(parsed));
  if (const auto* error = std::get_if<std::string>(&resolved)) {
    return WebStartError{2, flag_error(options.listen_address, *error)};
  }
  auto security = std::make_shared<WebSecuritySource>();
  if (!options.web_config_file.empty()) {
    auto loaded = WebSecuritySource::load(options.web_config_file);
    if (auto* error = std::get_if<std::string>(&loaded)) return WebStartError{2, *error};
    security = std::move(std::get<std::unique_ptr<WebSecuritySource>>(loaded));
  }
  const bool tls = security->tls();
  auto started = HttpServer::bind(std::get<ListenAddress>(resolved), std::move(security));
  if (auto* error = std::get_if<std::string>(&started)) {
    return WebStartError{1, flag_error(options.listen_address, *error)};
  }
  std::unique_ptr<MetricsServer> server(new MetricsServer());
  server->collectable_ = std::move(collectable);
  server->server_ = std::move(std::get<std::unique_ptr<HttpServer>>(started));
  server->tls_ = tls;
  // Scrapes are rendered on the I/O thread (fast, never waiting); pages that may wait get a
  // thread of their own and never delay them.
  server->server_->add_route(
      "/metrics",
      [collectable = server->collectable_](const HttpRequest& request) {
        return render_metrics(*collectable, request);
      },
      RouteLane::Inline);
  server->add_route("/", landing_page);
  return server;
}

std::variant<std::unique_ptr<MetricsServer>, std::string> MetricsServer::start(
    const std::string& listen_address, std::shared_ptr<SnapshotCollectable> collectable) {
  auto started = start(WebOptions{listen_address, ""}, std::move(collectable));
  if (auto* error = std::get_if<WebStartError>(&started)) return error->message;
  return std::move(std::get<std::unique_ptr<MetricsServer>>(started));
}

MetricsServer::~MetricsServer() = default;

void MetricsServer::add_route(std::string path, HttpHandler handler) {
  server_->add_route(std::move(path), std::move(handler), RouteLane::Own);
}

int MetricsServer::port() const { return server_->port(); }

std::string MetricsServer::bound_address() const { return server_->bound_address(); }

}  // namespace hucprof
