#pragma once
// What an HttpServer's parts share: the listener (web/http_listener.cpp) accepts connections
// into sessions (web/http_session.h), which route requests to handlers, some on
// HandlerThreads; web/http_server.cpp starts and stops it all. Only those files include this.
#include <atomic>
#include <chrono>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <shared_mutex>
#include <string>
#include <string_view>
#include <thread>
#include <unordered_map>
#include <vector>

#include <boost/asio.hpp>
#include <boost/beast/core.hpp>

#include "core/base/http_types.h"
#include "web/handler_threads.h"
#include "web/http_server.h"

namespace hucprof {

namespace net = boost::asio;
namespace beast = boost::beast;
using tcp = net::ip::tcp;

inline int64_t now_ns() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

struct Route {
  HttpHandler handler;
  RouteLane lane;
};

class SessionBase {
 public:
  virtual ~SessionBase() = default;
  // Closes the connection from any thread.
  virtual void close() = 0;
  // A handler runs or a response is being written: not to be closed for a newcomer.
  std::atomic<bool> busy{false};
  // Chosen to make room: its close is on its way, and it counts no more against the limit.
  bool closing = false;  // under sessions_mutex
  std::atomic<int64_t> waiting_since_ns{now_ns()};
};

struct HttpServer::Impl {
  HttpServerLimits limits;
  std::shared_ptr<WebSecuritySource> security;
  std::atomic<bool> stopping{false};

  std::shared_mutex routes_mutex;
  std::map<std::string, std::shared_ptr<const Route>, std::less<>> routes;

  std::mutex sessions_mutex;
  std::unordered_map<SessionBase*, std::weak_ptr<SessionBase>> sessions;

  HandlerThreads handler_threads;

  // Declared after everything a session touches when it is destroyed (the io_context destroys
  // the sessions still queued in it).
  net::io_context io;
  // One thread: bcrypt is slow on purpose, and a flood of wrong passwords must queue behind
  // each other, not take every core (exporter-toolkit serializes it with a mutex). After `io`:
  // checks still queued hold sessions, which must go before their io_context does.
  std::optional<net::thread_pool> auth_pool;  // from serve(): its thread starts at once
  std::optional<net::executor_work_guard<net::io_context::executor_type>> work;
  tcp::acceptor acceptor{io};
  // Open connections allowed: limits.max_connections, or fewer when RLIMIT_NOFILE would run
  // out first (computed in serve(), once the daemon holds all its other descriptors).
  size_t max_connections = 0;
  size_t live_sessions = 0;  // in sessions and not closing; under sessions_mutex
  int spare_fd = -1;         // given up by shed_one to accept with
  net::steady_timer accept_retry{io};
  // Looks at the web config every WebSecuritySource::kCheckPeriod, traffic or not: an edit is
  // reported (and a renewed certificate loaded) when it is made, and no request pays for it.
  net::steady_timer config_check{io};
  std::chrono::steady_clock::time_point last_accept_warning{};
  std::vector<std::thread> io_threads;
  tcp::endpoint bound;

  explicit Impl(HttpServerLimits l, std::shared_ptr<WebSecuritySource> s)
      : limits(l),
        security(std::move(s)),
        handler_threads(l.max_handler_threads),
        io(static_cast<int>(l.io_threads)) {}

  std::shared_ptr<const Route> find_route(std::string_view path) {
    std::shared_lock lock(routes_mutex);
    const auto it = routes.find(path);
    return it == routes.end() ? nullptr : it->second;
  }

  void accept();
  void check_config();
  void on_accept(beast::error_code ec, tcp::socket socket);
  template <class SessionType>
  void launch(std::shared_ptr<SessionType> session);
  // False when every open connection is busy: the newcomer is refused instead.
  bool make_room();
  // Out of descriptors: one queued connection is accepted and closed, so the listen queue
  // moves instead of holding scrapers behind connections that cannot be served.
  void shed_one();
  void stop();
};

}  // namespace hucprof
