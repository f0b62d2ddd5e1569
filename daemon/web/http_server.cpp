#include "web/http_server.h"

#include <sys/eventfd.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>

#include "core/base/message_text.h"
#include "web/http_listener.h"
#include "web/http_server_impl.h"
#include "web/io_thread.h"
#include "web/web_security.h"

namespace hucprof {

void HttpServer::Impl::stop() {
  if (stopping.exchange(true)) return;
  net::post(io, [this] {
    beast::error_code ignored;
    acceptor.close(ignored);
    accept_retry.cancel();
    config_check.cancel();
  });
  std::vector<std::shared_ptr<SessionBase>> open;
  {
    std::lock_guard lock(sessions_mutex);
    for (const auto& [raw, weak] : sessions) {
      if (auto strong = weak.lock()) open.push_back(std::move(strong));
    }
  }
  for (const auto& session : open) session->close();
  open.clear();
  handler_threads.join_all();
  work.reset();
  io.stop();
  for (auto& thread : io_threads) thread.join();
  io_threads.clear();
  if (auth_pool) {
    auth_pool->stop();  // checks still queued are dropped: their connections are closed
    auth_pool->join();
  }
  if (spare_fd >= 0) ::close(spare_fd);
  spare_fd = -1;
}

Result<std::unique_ptr<HttpServer>> HttpServer::start(const ListenAddress& address,
                                                      std::shared_ptr<WebSecuritySource> security,
                                                      HttpServerLimits limits) {
  auto bound = bind(address, std::move(security), limits);
  if (bound.ok()) bound.value()->serve();
  return bound;
}

void HttpServer::serve() {
  if (!impl_->io_threads.empty()) return;
  impl_->max_connections = connection_limit(impl_->limits.max_connections);
  impl_->spare_fd = ::eventfd(0, EFD_CLOEXEC);
  impl_->auth_pool.emplace(1);
  for (unsigned i = 0; i < std::max(1u, impl_->limits.io_threads); ++i) {
    impl_->io_threads.emplace_back([io = &impl_->io] { run_io_thread(*io); });
  }
}

Result<std::unique_ptr<HttpServer>> HttpServer::bind(const ListenAddress& address,
                                                     std::shared_ptr<WebSecuritySource> security,
                                                     HttpServerLimits limits) {
  if (!security) security = std::make_shared<WebSecuritySource>();
  auto impl = std::make_unique<Impl>(limits, std::move(security));
  auto resolved = resolve_listen_address(address);
  if (!resolved.ok()) return resolved.error();
  const ListenAddress& numeric = resolved.value();
  if (auto listening =
          listen_on(impl->acceptor, endpoint_of(numeric), numeric.kind == ListenAddress::Kind::Any);
      !listening.ok()) {
    return listening.error();
  }
  impl->bound = impl->acceptor.local_endpoint();
  impl->work.emplace(impl->io.get_executor());
  impl->accept();
  impl->check_config();
  return std::unique_ptr<HttpServer>(new HttpServer(std::move(impl)));
}

Result<std::unique_ptr<HttpServer>> HttpServer::adopt(int listening_fd,
                                                      std::shared_ptr<WebSecuritySource> security,
                                                      HttpServerLimits limits) {
  if (!security) security = std::make_shared<WebSecuritySource>();
  auto impl = std::make_unique<Impl>(limits, std::move(security));
  sockaddr_storage address{};
  socklen_t length = sizeof(address);
  if (getsockname(listening_fd, reinterpret_cast<sockaddr*>(&address), &length) != 0 ||
      (address.ss_family != AF_INET && address.ss_family != AF_INET6)) {
    return Error{"socket " + std::to_string(listening_fd) + " is not an IPv4 or IPv6 socket",
                 kExitCannotRun};
  }
  beast::error_code ec;
  impl->acceptor.assign(address.ss_family == AF_INET6 ? tcp::v6() : tcp::v4(), listening_fd, ec);
  if (!ec) impl->bound = impl->acceptor.local_endpoint(ec);
  if (ec) {
    return Error{"socket " + std::to_string(listening_fd) + ": " + lowercase_first(ec.message()),
                 kExitCannotRun};
  }
  impl->work.emplace(impl->io.get_executor());
  impl->accept();
  impl->check_config();
  return std::unique_ptr<HttpServer>(new HttpServer(std::move(impl)));
}

Result<ListenAddress> resolve_listen_address(const ListenAddress& address) {
  if (address.kind != ListenAddress::Kind::HostName) return address;
  net::io_context io;
  tcp::resolver resolver(io);
  beast::error_code ec;
  const auto results = resolver.resolve(address.host, std::to_string(address.port), ec);
  if (ec) {
    return Error{"cannot resolve host \"" + address.host + "\": " + lowercase_first(ec.message())};
  }
  std::optional<ListenAddress> v4, v6;
  for (const auto& entry : results) {
    const auto ip = entry.endpoint().address();
    if (ip.is_v4() && !v4)
      v4 = ListenAddress{ListenAddress::Kind::IPv4, ip.to_string(), address.port};
    if (ip.is_v6() && !v6)
      v6 = ListenAddress{ListenAddress::Kind::IPv6, ip.to_string(), address.port};
  }
  if (v4) return *v4;
  if (v6) return *v6;
  return Error{"host \"" + address.host + "\" has no IPv4 or IPv6 address"};
}

HttpServer::HttpServer(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}

HttpServer::~HttpServer() { impl_->stop(); }

void HttpServer::add_route(std::string path, HttpHandler handler, RouteLane lane) {
  auto route = std::make_shared<const Route>(Route{std::move(handler), lane});
  std::unique_lock lock(impl_->routes_mutex);
  impl_->routes[std::move(path)] = std::move(route);
}

int HttpServer::port() const { return impl_->bound.port(); }

std::string HttpServer::bound_address() const { return endpoint_text(impl_->bound); }

}  // namespace hucprof
