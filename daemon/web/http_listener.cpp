#include "web/http_listener.h"

#include <sys/eventfd.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <unistd.h>

#include <filesystem>
#include <limits>

#include <spdlog/spdlog.h>

#include "core/base/message_text.h"
#include "web/http_server_impl.h"
#include "web/http_session.h"
#include "web/web_security.h"

namespace hucprof {
namespace {

constexpr std::chrono::milliseconds kAcceptRetry{100};

// Descriptors kept free beside the connections: the accept in flight, the spare one, files
// read while serving (web config, certificates, /proc), a reload's.
constexpr size_t kSpareDescriptors = 32;

size_t open_descriptors() {
  std::error_code ec;
  size_t n = 0;
  for (auto it = std::filesystem::directory_iterator("/proc/self/fd", ec);
       !ec && it != std::filesystem::directory_iterator(); it.increment(ec)) {
    ++n;
  }
  return n;
}

}  // namespace

std::string endpoint_text(const tcp::endpoint& endpoint) {
  const auto address = endpoint.address();
  const std::string port = ":" + std::to_string(endpoint.port());
  return address.is_v6() ? "[" + address.to_string() + "]" + port : address.to_string() + port;
}

tcp::endpoint endpoint_of(const ListenAddress& address) {
  if (address.kind == ListenAddress::Kind::Any) return tcp::endpoint(tcp::v6(), address.port);
  beast::error_code ec;
  return tcp::endpoint(net::ip::make_address(address.host, ec), address.port);
}

Result<void> listen_on(tcp::acceptor& acceptor, tcp::endpoint endpoint, bool dual_stack) {
  beast::error_code ec;
  acceptor.open(endpoint.protocol(), ec);
  if (ec && dual_stack && ec == net::error::address_family_not_supported) {
    // IPv6 is disabled or compiled out: every interface means every IPv4 one.
    endpoint = tcp::endpoint(tcp::v4(), endpoint.port());
    dual_stack = false;
    acceptor.open(endpoint.protocol(), ec);
  }
  if (!ec) acceptor.set_option(net::socket_base::reuse_address(true), ec);
  // One socket for IPv4 and IPv6, whatever net.ipv6.bindv6only says.
  if (!ec && dual_stack) acceptor.set_option(net::ip::v6_only(false), ec);
  if (!ec) acceptor.bind(endpoint, ec);
  if (!ec) acceptor.listen(net::socket_base::max_listen_connections, ec);
  if (!ec) return {};
  beast::error_code ignored;
  acceptor.close(ignored);
  const std::string where =
      dual_stack ? "port " + std::to_string(endpoint.port()) : endpoint_text(endpoint);
  return Error{"cannot listen on " + where + ": " + lowercase_first(ec.message()), kExitCannotRun};
}

size_t connection_limit(size_t wanted) {
  rlimit files{};
  if (::getrlimit(RLIMIT_NOFILE, &files) != 0 || files.rlim_cur == RLIM_INFINITY) return wanted;
  const size_t used = open_descriptors() + kSpareDescriptors;
  const size_t room = files.rlim_cur > used ? files.rlim_cur - used : 0;
  const size_t limit = std::max<size_t>(1, std::min(wanted, room));
  if (limit < wanted) {
    spdlog::warn(
        "web: at most {} connections at once instead of {}: RLIMIT_NOFILE is {} and {} "
        "descriptors are in use or kept spare (raise it with LimitNOFILE= or ulimit -n)",
        limit, wanted, files.rlim_cur, used);
  }
  return limit;
}

void HttpServer::Impl::accept() {
  acceptor.async_accept(net::make_strand(io), [this](beast::error_code ec, tcp::socket socket) {
    on_accept(ec, std::move(socket));
  });
}

void HttpServer::Impl::check_config() {
  security->check_for_changes();
  config_check.expires_after(WebSecuritySource::kCheckPeriod);
  config_check.async_wait([this](beast::error_code ec) {
    if (!ec && !stopping) check_config();
  });
}

void HttpServer::Impl::on_accept(beast::error_code ec, tcp::socket socket) {
  if (stopping || ec == net::error::operation_aborted) return;
  if (ec) {
    // Usually EMFILE: out of file descriptors. Shed a queued connection, then back off instead
    // of spinning; connections in progress finish and free theirs.
    if (std::chrono::steady_clock::now() - last_accept_warning > std::chrono::seconds(10)) {
      last_accept_warning = std::chrono::steady_clock::now();
      spdlog::warn("web: cannot accept connections: {}", ec.message());
    }
    if (ec == net::error::no_descriptors || ec.value() == ENFILE) shed_one();
    accept_retry.expires_after(kAcceptRetry);
    accept_retry.async_wait([this](beast::error_code wait_ec) {
      if (!wait_ec && !stopping) accept();
    });
    return;
  }
  beast::error_code ignored;
  if (!make_room()) {
    // Every connection is busy with a request: this one is refused at once, not queued.
    socket.close(ignored);
    return accept();
  }
  socket.set_option(tcp::no_delay(true), ignored);
  // Each connection is served with the web config in force when it arrives.
  auto current = security->current();
  if (security->tls()) {
    auto& tls = *current->tls;
    launch(std::make_shared<Session<beast::ssl_stream<beast::tcp_stream>>>(
        *this, current,
        beast::ssl_stream<beast::tcp_stream>(beast::tcp_stream(std::move(socket)), tls)));
  } else {
    launch(std::make_shared<Session<beast::tcp_stream>>(*this, current,
                                                        beast::tcp_stream(std::move(socket))));
  }
  accept();
}

template <class SessionType>
void HttpServer::Impl::launch(std::shared_ptr<SessionType> session) {
  {
    std::lock_guard lock(sessions_mutex);
    sessions.emplace(session.get(), session);
    ++live_sessions;
  }
  session->run();
}

bool HttpServer::Impl::make_room() {
  std::shared_ptr<SessionBase> oldest;
  {
    std::lock_guard lock(sessions_mutex);
    if (live_sessions < max_connections) return true;
    int64_t oldest_since = std::numeric_limits<int64_t>::max();
    for (const auto& [raw, weak] : sessions) {
      if (raw->busy || raw->closing) continue;
      if (const int64_t since = raw->waiting_since_ns; since < oldest_since) {
        if (auto strong = weak.lock()) {
          oldest = std::move(strong);
          oldest_since = since;
        }
      }
    }
    if (!oldest) return false;
    // Counted out now, not when its close has run: a burst of connections must not pick the
    // same one over and over while the first close is still queued.
    oldest->closing = true;
    --live_sessions;
  }
  oldest->close();
  return true;
}

void HttpServer::Impl::shed_one() {
  if (spare_fd >= 0) {
    ::close(spare_fd);
    spare_fd = -1;
  }
  const int refused = ::accept4(acceptor.native_handle(), nullptr, nullptr, SOCK_CLOEXEC);
  if (refused >= 0) ::close(refused);
  spare_fd = ::eventfd(0, EFD_CLOEXEC);
}

}  // namespace hucprof
