#include "web/http_server.h"

#include <netinet/in.h>
#include <netinet/tcp.h>
#include <openssl/err.h>
#include <openssl/ssl.h>
#include <sys/eventfd.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <condition_variable>
#include <filesystem>
#include <list>
#include <map>
#include <mutex>
#include <optional>
#include <shared_mutex>
#include <thread>
#include <unordered_map>

#include <spdlog/spdlog.h>
#include <boost/asio.hpp>
#include <boost/asio/ssl.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <boost/beast/ssl.hpp>

#include "cli/message_text.h"
#include "web/basic_auth.h"
#include "web/http_framing.h"
#include "web/http_target.h"
#include "web/tls_context.h"
#include "web/web_security.h"

namespace hucprof {
namespace {

namespace net = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;
using tcp = net::ip::tcp;
using Clock = std::chrono::steady_clock;

constexpr size_t kReadChunk = 4096;
constexpr std::chrono::seconds kTlsShutdownTimeout{1};
constexpr std::chrono::milliseconds kAcceptRetry{100};
constexpr std::chrono::seconds kSlowHandlerWarning{2};
constexpr const char* kPlainHttpToTlsPort =
    "HTTP/1.0 400 Bad Request\r\nContent-Type: text/plain; charset=utf-8\r\n"
    "Connection: close\r\n\r\nClient sent an HTTP request to an HTTPS server.\n";

int64_t now_ns() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(Clock::now().time_since_epoch())
      .count();
}

// Whether the client of a running handler is still there, asked from the handler's thread: the
// TCP state of the socket (a FIN or RST from the client leaves ESTABLISHED), read under a lock
// that the session takes before it closes the socket, so a closed and reused fd is never asked.
class ClientWatch {
 public:
  explicit ClientWatch(int fd) : fd_(fd) {}
  void forget() {
    std::lock_guard lock(mutex_);
    fd_ = -1;
  }
  bool gone() {
    std::lock_guard lock(mutex_);
    if (fd_ < 0) return true;
    tcp_info info{};
    socklen_t length = sizeof(info);
    if (getsockopt(fd_, IPPROTO_TCP, TCP_INFO, &info, &length) != 0) return true;
    return info.tcpi_state != TCP_ESTABLISHED;
  }

 private:
  std::mutex mutex_;
  int fd_;
};

// Handlers that may block run one thread each, at most `max` at once.
class HandlerThreads {
 public:
  explicit HandlerThreads(size_t max) : max_(max) {}

  // False when `max` handlers run already, or after join_all (an I/O thread may route a request
  // while the server stops; a thread started then would never be joined).
  bool launch(std::function<void()> work) {
    std::lock_guard lock(mutex_);
    reap();
    if (closed_ || active_ >= max_) return false;
    ++active_;
    threads_.emplace_back([this, work = std::move(work)] {
      work();
      std::lock_guard done(mutex_);
      --active_;
      finished_.push_back(std::this_thread::get_id());
      idle_.notify_all();
    });
    return true;
  }

  // After the server said stop (handlers see cancelled() turn true).
  void join_all() {
    std::unique_lock lock(mutex_);
    closed_ = true;
    if (!idle_.wait_for(lock, kSlowHandlerWarning, [this] { return active_ == 0; })) {
      spdlog::warn("web server stopping: waiting for {} request handler(s) to return", active_);
      idle_.wait(lock, [this] { return active_ == 0; });
    }
    for (auto& thread : threads_) thread.join();
    threads_.clear();
    finished_.clear();
  }

 private:
  void reap() {
    for (const auto id : finished_) {
      for (auto it = threads_.begin(); it != threads_.end(); ++it) {
        if (it->get_id() == id) {
          it->join();  // it has left `work` and only unwinds: this returns at once
          threads_.erase(it);
          break;
        }
      }
    }
    finished_.clear();
  }

  std::mutex mutex_;
  std::condition_variable idle_;
  size_t max_;
  size_t active_ = 0;
  bool closed_ = false;
  std::list<std::thread> threads_;
  std::vector<std::thread::id> finished_;
};

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

HttpResponse text_response(int status, std::string text) {
  HttpResponse response;
  response.status = status;
  response.body = std::move(text);
  return response;
}

}  // namespace

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
  Clock::time_point last_accept_warning{};
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

namespace {

template <class Stream>
class Session : public SessionBase, public std::enable_shared_from_this<Session<Stream>> {
 public:
  Session(HttpServer::Impl& server, std::shared_ptr<const WebSecurity> security, Stream&& stream)
      : server_(server), security_(std::move(security)), stream_(std::move(stream)) {}

  ~Session() override {
    std::lock_guard lock(server_.sessions_mutex);
    server_.sessions.erase(this);
    if (!closing) --server_.live_sessions;
  }

  void run() {
    if constexpr (kTls) {
      lowest().expires_after(server_.limits.request_timeout);
      stream_.async_handshake(
          net::ssl::stream_base::server,
          [self = this->shared_from_this()](beast::error_code ec) { self->on_handshake(ec); });
    } else {
      wait_for_request();
    }
  }

  void close() override {
    net::post(lowest().get_executor(), [self = this->shared_from_this()] { self->close_now(); });
  }

 private:
  static constexpr bool kTls = !std::is_same_v<Stream, beast::tcp_stream>;

  beast::tcp_stream& lowest() { return beast::get_lowest_layer(stream_); }

  void close_now() {
    if (watch_) watch_->forget();
    beast::error_code ignored;
    lowest().socket().shutdown(tcp::socket::shutdown_both, ignored);
    lowest().close();
  }

  void on_handshake(beast::error_code ec) {
    if (ec) {
      // Someone spoke plain HTTP to the TLS port (a scrape config without scheme: https): say
      // so in plain text, as Go's server does, instead of a silent close.
      if (ec.category() == net::error::get_ssl_category() &&
          ERR_GET_REASON(static_cast<unsigned long>(ec.value())) == SSL_R_HTTP_REQUEST) {
        lowest().expires_after(server_.limits.write_timeout);
        net::async_write(
            lowest(), net::buffer(std::string_view(kPlainHttpToTlsPort)),
            [self = this->shared_from_this()](beast::error_code, size_t) { self->close_now(); });
        return;
      }
      spdlog::debug("web: TLS handshake failed: {}", ec.message());
      return close_now();
    }
    if constexpr (kTls) {
      const auto& sans = security_->config.tls->client_allowed_sans;
      if (!sans.empty() && !peer_has_allowed_san(stream_.native_handle(), sans)) {
        spdlog::debug("web: client certificate carries none of client_allowed_sans");
        return close_now();
      }
    }
    wait_for_request();
  }

  void wait_for_request() {
    busy = false;
    waiting_since_ns = now_ns();
    if (server_.stopping) return close_now();
    if (buffer_.size() > 0) return read_request();  // pipelined: the next request is here
    lowest().expires_after(server_.limits.idle_timeout);
    stream_.async_read_some(buffer_.prepare(kReadChunk),
                            [self = this->shared_from_this()](beast::error_code ec, size_t n) {
                              if (ec)
                                return self->close_now();  // idle timeout, or the client closed
                              self->buffer_.commit(n);
                              self->read_request();
                            });
  }

  void read_request() {
    waiting_since_ns = now_ns();
    parser_.emplace();
    parser_->header_limit(static_cast<uint32_t>(server_.limits.header_limit));
    parser_->body_limit(server_.limits.body_limit);
    lowest().expires_after(server_.limits.request_timeout);
    http::async_read(
        stream_, buffer_, *parser_,
        [self = this->shared_from_this()](beast::error_code ec, size_t) { self->on_read(ec); });
  }

  void on_read(beast::error_code ec) {
    if (ec == http::error::end_of_stream || ec == beast::error::timeout || ec == net::error::eof ||
        ec == net::error::operation_aborted || ec == net::error::connection_reset) {
      return close_now();
    }
    if (ec) {
      // The request cannot be read to its end, so the connection cannot go on after the answer.
      busy = true;
      head_ = false;
      version_ = 11;
      keep_alive_ = false;
      if (ec == http::error::header_limit) {
        return respond(text_response(431, "request header fields too large\n"));
      }
      if (ec == http::error::body_limit)
        return respond(text_response(413, "request body too large\n"));
      if (ec.category() == net::error::get_ssl_category() ||
          ec.category() == net::error::get_system_category()) {
        return close_now();
      }
      return respond(text_response(400, "bad request: " + ec.message() + "\n"));
    }
    busy = true;
    lowest().expires_never();  // a handler may take its time; the write gets its own timeout
    request_ = parser_->release();
    parser_.reset();
    head_ = request_.method() == http::verb::head;
    version_ = request_.version();
    keep_alive_ = request_.keep_alive();
    security_ = server_.security->current();
    if (version_ != 10 && version_ != 11) {
      keep_alive_ = false;
      return respond(text_response(505, "HTTP version not supported\n"));
    }
    if (auto faulty = request_framing_error(request_head_of(request_))) {
      // Where this request ends is not known (or it names no host): nothing after it on this
      // connection can be trusted to be a request of its own.
      keep_alive_ = false;
      return respond(text_response(faulty->status, "bad request: " + faulty->reason + "\n"));
    }
    if (security_->limiter && !security_->limiter->allow()) {
      HttpResponse response = text_response(429, "too many requests\n");
      response.headers.emplace_back("Retry-After", "1");
      return respond(std::move(response));
    }
    if (!security_->auth) return route();
    const auto credentials =
        parse_basic_authorization(std::string_view(request_[http::field::authorization]));
    if (!credentials) return unauthorized();
    if (security_->auth->cached(*credentials)) return route();
    net::post(*server_.auth_pool,
              [self = this->shared_from_this(), given = *credentials, auth = security_->auth] {
                const bool ok = auth->verify(given);
                net::post(self->lowest().get_executor(), [self, ok] {
                  if (ok) {
                    self->route();
                  } else {
                    self->unauthorized();
                  }
                });
              });
  }

  void unauthorized() {
    HttpResponse response = text_response(401, "unauthorized\n");
    response.headers.emplace_back("WWW-Authenticate", "Basic realm=\"hucprof\", charset=\"UTF-8\"");
    respond(std::move(response));
  }

  void route() {
    auto target = parse_request_target(std::string_view(request_.target()));
    if (!target.ok())
      return respond(text_response(400, "bad request: " + target.error().text + "\n"));
    RequestTarget& decoded = target.value();
    const auto route = server_.find_route(decoded.path);
    if (!route) return respond(text_response(404, "404 page not found\n"));
    if (request_.method() != http::verb::get && request_.method() != http::verb::head) {
      HttpResponse response = text_response(405, "method not allowed\n");
      response.headers.emplace_back("Allow", "GET, HEAD");
      return respond(std::move(response));
    }
    HttpRequest request;
    request.method = head_ ? "HEAD" : "GET";
    request.path = std::move(decoded.path);
    request.query = std::move(decoded.query);
    for (const auto& field : request_) {
      std::string name(field.name_string());
      for (char& c : name) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
      auto [it, inserted] = request.headers.emplace(name, std::string(field.value()));
      if (!inserted) it->second += ", " + std::string(field.value());
    }
    beast::error_code peer_error;
    const auto peer = lowest().socket().remote_endpoint(peer_error);
    if (!peer_error) request.peer = peer.address().to_string();
    watch_ = std::make_shared<ClientWatch>(lowest().socket().native_handle());
    request.cancelled = [server = &server_, watch = watch_] {
      return server->stopping.load() || watch->gone();
    };
    if (route->lane == RouteLane::Inline) return respond(run_handler(*route, request));
    auto work = [self = this->shared_from_this(), route, request = std::move(request)] {
      HttpResponse response = run_handler(*route, request);
      net::post(self->lowest().get_executor(), [self, response = std::move(response)]() mutable {
        self->respond(std::move(response));
      });
    };
    if (!server_.handler_threads.launch(std::move(work))) {
      HttpResponse response = text_response(503, "too many requests in progress\n");
      response.headers.emplace_back("Retry-After", "5");
      respond(std::move(response));
    }
  }

  static HttpResponse run_handler(const Route& route, const HttpRequest& request) {
    try {
      return route.handler(request);
    } catch (const std::exception& e) {
      spdlog::error("web: handler for {} failed: {}", request.path, e.what());
      return text_response(500, "internal server error\n");
    }
  }

  void respond(HttpResponse response) {
    if (watch_) watch_->forget();
    watch_.reset();
    auto message = std::make_shared<http::response<http::string_body>>();
    message->version(version_);
    message->result(static_cast<unsigned>(response.status));
    message->set(http::field::content_type, response.content_type);
    for (const auto& [name, value] : response.headers) {
      // A line break in a handler's header would let it write headers (or a body) of its own.
      if (name.empty() || name.find_first_of(":\r\n", 0) != std::string::npos ||
          value.find_first_of(std::string_view("\r\n\0", 3)) != std::string::npos) {
        spdlog::error("web: dropped malformed response header \"{}\"", name);
        continue;
      }
      message->set(name, value);
    }
    if (security_) {
      for (const auto& [name, value] : security_->config.headers) message->set(name, value);
    }
    message->keep_alive(keep_alive_ && !server_.stopping);
    // HEAD: the headers GET would send, Content-Length included, and no body.
    message->content_length(response.body.size());
    if (!head_) message->body() = std::move(response.body);
    lowest().expires_after(server_.limits.write_timeout);
    http::async_write(stream_, *message,
                      [self = this->shared_from_this(), message](beast::error_code ec, size_t) {
                        if (ec) return self->close_now();
                        if (message->need_eof()) return self->finish();
                        self->wait_for_request();
                      });
  }

  // A clean end after "Connection: close": TLS says close_notify first.
  void finish() {
    if constexpr (kTls) {
      lowest().expires_after(kTlsShutdownTimeout);
      stream_.async_shutdown(
          [self = this->shared_from_this()](beast::error_code) { self->close_now(); });
    } else {
      close_now();
    }
  }

  HttpServer::Impl& server_;
  std::shared_ptr<const WebSecurity> security_;  // before stream_: the TLS context outlives it
  Stream stream_;
  std::shared_ptr<ClientWatch> watch_;
  beast::flat_buffer buffer_;
  std::optional<http::request_parser<http::string_body>> parser_;
  http::request<http::string_body> request_;
  bool head_ = false;
  bool keep_alive_ = false;
  unsigned version_ = 11;
};

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

// Errors mean exit 1: the address is well formed, this host cannot listen there.
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

// `wanted`, or as many as RLIMIT_NOFILE leaves once everything else is open: past the limit
// every accept fails, and the connections that then wait in the listen queue include scrapers.
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

}  // namespace

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
    if (Clock::now() - last_accept_warning > std::chrono::seconds(10)) {
      last_accept_warning = Clock::now();
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
    impl_->io_threads.emplace_back([io = &impl_->io] { io->run(); });
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
