#pragma once
#include <chrono>
#include <cstddef>
#include <memory>
#include <string>

#include "core/base/http_types.h"
#include "core/base/result.h"
#include "core/text/listen_address.h"

namespace hucprof {

class WebSecuritySource;

// Bounds that keep one client from holding what others need. A connection costs a socket and a
// few KiB, never a thread: reads and writes are asynchronous on a small pool.
struct HttpServerLimits {
  // From the connection's start (TLS handshake included), or from the first byte of a later
  // request, until the request head and body are in: slowloris gets this long, then a close.
  std::chrono::milliseconds request_timeout{10'000};
  // How long a kept-alive connection may wait for its next request (Prometheus scrapes every
  // 15-60 s and reuses its connection).
  std::chrono::milliseconds idle_timeout{120'000};
  // How long a client may take to read a response.
  std::chrono::milliseconds write_timeout{60'000};
  // Open connections; at the limit the longest-waiting idle or still-reading connection is
  // closed for the newcomer, so held-open sockets cannot lock out a scraper.
  size_t max_connections = 512;
  size_t header_limit = 16 * 1024;  // request line + headers, and a chunked body's trailers
  size_t body_limit = 64 * 1024;    // GET and HEAD need none; read and dropped
  // Requests to add_route handlers running at once (each on its own thread, since they may wait
  // for minutes); more get 503.
  size_t max_handler_threads = 16;
  // Threads doing network I/O and running Inline handlers. /metrics renders in well under a
  // millisecond; handing it to another thread cost more than rendering under CPU contention.
  unsigned io_threads = 2;
};

// Which threads run a route's handler.
enum class RouteLane {
  Inline,  // the I/O thread that read the request: for handlers that return at once, never wait
  Own,     // a thread of its own per request (capped), for handlers that may block
};

// An HTTP/1.1 server (Boost.Beast on Asio, TLS through OpenSSL) for /metrics and the routes
// other exporters register: keep-alive, HEAD, 405 with Allow for other methods on a known path,
// 404 for unknown paths, absolute-form targets, IPv4 and IPv6, and the web config's TLS, basic
// auth, headers and rate limit. Handlers get HttpRequest and return HttpResponse.
class HttpServer {
 public:
  // Binds `address` (":port" and "[::]:port" are one dual-stack socket; a host name is resolved
  // first, see resolve_listen_address) and starts serving. The error is in words, e.g.
  // "cannot listen on 127.0.0.1:9478: address already in use" (exit 1: this host), or a host
  // name that does not resolve (exit 2).
  static Result<std::unique_ptr<HttpServer>> start(const ListenAddress& address,
                                                   std::shared_ptr<WebSecuritySource> security,
                                                   HttpServerLimits limits = {});
  // Binds as start() does but runs no thread until serve(): connections wait in the listen
  // backlog. Capabilities belong to each thread and threads inherit their creator's, so hucprof
  // binds before attaching (a taken port is found at once) and serves after dropping them.
  static Result<std::unique_ptr<HttpServer>> bind(const ListenAddress& address,
                                                  std::shared_ptr<WebSecuritySource> security,
                                                  HttpServerLimits limits = {});
  // Serves a socket that is already listening (socket activation: systemd passes it), as bind()
  // does; the server owns it from then on. The error is in words (exit 1).
  static Result<std::unique_ptr<HttpServer>> adopt(int listening_fd,
                                                   std::shared_ptr<WebSecuritySource> security,
                                                   HttpServerLimits limits = {});
  void serve();
  // Stops: closes the listener and every connection, tells running handlers (cancelled()), and
  // waits for them.
  ~HttpServer();
  HttpServer(const HttpServer&) = delete;
  HttpServer& operator=(const HttpServer&) = delete;

  // GET and HEAD of `path` (exact match after percent-decoding) go to `handler`; replaces an
  // earlier handler of the same path. Callable while serving.
  void add_route(std::string path, HttpHandler handler, RouteLane lane = RouteLane::Own);

  int port() const;
  // What is bound, e.g. "[::]:9478" or "127.0.0.1:9478".
  std::string bound_address() const;

  struct Impl;

 private:
  explicit HttpServer(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

// A host name resolved like Go's net.Listen does it: the first IPv4 address, else the first
// IPv6 one. Other addresses come back unchanged. The error is in words.
Result<ListenAddress> resolve_listen_address(const ListenAddress& address);

}  // namespace hucprof
