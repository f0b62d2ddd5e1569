#pragma once
// One connection of an HttpServer, plain or TLS: the handshake, reading requests (keep-alive,
// pipelining; web/request_reader bounds every read), the checks before a handler runs (framing,
// rate limit, basic auth), routing to the handler (inline or on a thread of its own) and writing
// the response.
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <openssl/err.h>
#include <openssl/ssl.h>
#include <sys/socket.h>

#include <atomic>
#include <cctype>
#include <chrono>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <type_traits>

#include <spdlog/spdlog.h>
#include <boost/asio/ssl.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <boost/beast/ssl.hpp>

#include "web/http_server_impl.h"
#include "web/tls_context.h"
#include "web/web_security.h"
#include "web_input/basic_auth.h"
#include "web_input/http_framing.h"
#include "web_input/http_target.h"
#include "web_input/request_reader.h"

namespace hucprof {

namespace http = beast::http;

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

inline HttpResponse text_response(int status, std::string text) {
  HttpResponse response;
  response.status = status;
  response.body = std::move(text);
  return response;
}

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
  static constexpr size_t kReadChunk = 4096;
  static constexpr std::chrono::seconds kTlsShutdownTimeout{1};
  static constexpr const char* kPlainHttpToTlsPort =
      "HTTP/1.0 400 Bad Request\r\nContent-Type: text/plain; charset=utf-8\r\n"
      "Connection: close\r\n\r\nClient sent an HTTP request to an HTTPS server.\n";

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
    read_some([](Session& self) { self.read_request(); });
  }

  void read_request() {
    waiting_since_ns = now_ns();
    reader_.emplace(bounds());
    lowest().expires_after(server_.limits.request_timeout);
    read_buffered();
  }

  RequestBounds bounds() const {
    return RequestBounds{server_.limits.header_limit, server_.limits.body_limit};
  }

  // Reads once into the buffer, then `next`. Any error (the client closed or reset, a timeout,
  // TLS) ends the connection: there is nobody to answer.
  template <class Next>
  void read_some(Next next) {
    // The reader leaves at most pending_limit() unread, so one read's room is always left.
    const size_t room = buffer_.max_size() - buffer_.size();
    if (room == 0) {
      spdlog::error("web: a connection's read buffer is full: a bound does not hold");
      return close_now();
    }
    stream_.async_read_some(
        buffer_.prepare(std::min(kReadChunk, room)),
        [self = this->shared_from_this(), next](beast::error_code ec, size_t n) {
          if (ec) return self->close_now();
          self->buffer_.commit(n);
          next(*self);
        });
  }

  void read_buffered() {
    const auto data = buffer_.cdata();
    const auto step =
        reader_->read(std::string_view(static_cast<const char*>(data.data()), data.size()));
    buffer_.consume(step.used);
    switch (step.progress) {
      case RequestReader::Progress::NeedMore:
        return read_some([](Session& self) { self.read_buffered(); });
      case RequestReader::Progress::Refused:
        return refuse(reader_->refusal());
      case RequestReader::Progress::Done:
        return on_request();
    }
  }

  // The request cannot be read to its end, so the connection cannot go on after the answer.
  void refuse(const ReadRefusal& refusal) {
    busy = true;
    head_ = false;
    version_ = 11;
    keep_alive_ = false;
    respond(text_response(refusal.status, refusal.reason + "\n"));
  }

  void on_request() {
    busy = true;
    lowest().expires_never();  // a handler may take its time; the write gets its own timeout
    request_ = reader_->release();
    reader_.reset();
    head_ = request_.method() == http::verb::head;
    version_ = request_.version();
    keep_alive_ = request_.keep_alive();
    security_ = server_.security->current();
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
                bool ok = false;
                try {
                  ok = auth->verify(given);
                } catch (const std::exception& e) {
                  // The auth thread serves every connection: an escaped throw would end it.
                  spdlog::error("web: checking a password failed: {}", e.what());
                }
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
    } catch (...) {
      spdlog::error("web: handler for {} failed: it threw something not a std::exception",
                    request.path);
    }
    return text_response(500, "internal server error\n");
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
  // Never more than one read beyond what a reader may leave unread.
  beast::flat_buffer buffer_{bounds().pending_limit() + kReadChunk};
  std::optional<RequestReader> reader_;
  http::request<http::string_body> request_;
  bool head_ = false;
  bool keep_alive_ = false;
  unsigned version_ = 11;
};

}  // namespace hucprof
