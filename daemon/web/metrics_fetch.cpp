#include "web/metrics_fetch.h"

#include <openssl/evp.h>
#include <openssl/ssl.h>

#include <optional>
#include <type_traits>

#include <boost/asio.hpp>
#include <boost/asio/ssl.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <boost/beast/ssl.hpp>

#include "core/base/message_text.h"
#include "core/base/quoted_value.h"

namespace hucprof {
namespace {

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;
namespace ssl = asio::ssl;
using tcp = asio::ip::tcp;
using TlsStream = beast::ssl_stream<beast::tcp_stream>;

constexpr uint32_t kMaxHeadBytes = 64 * 1024;
constexpr std::chrono::milliseconds kPollStep{100};

std::string base64(std::string_view text) {
  std::string out(4 * ((text.size() + 2) / 3) + 1, '\0');
  const int n = EVP_EncodeBlock(reinterpret_cast<unsigned char*>(out.data()),
                                reinterpret_cast<const unsigned char*>(text.data()),
                                static_cast<int>(text.size()));
  out.resize(static_cast<size_t>(n));
  return out;
}

std::string size_text(size_t bytes) {
  return bytes % (1 << 20) == 0 ? std::to_string(bytes >> 20) + " MiB"
                                : std::to_string(bytes) + " bytes";
}

// One GET on `Stream` (a plain or a TLS stream over TCP), driven by the caller's io_context:
// each step starts the next, the last one or the first failure sets `outcome`.
template <class Stream>
class Exchange {
 public:
  Exchange(asio::io_context& io, Stream& stream, const MetricsUrl& url, const FetchOptions& options)
      : resolver_(io), stream_(stream), url_(url), options_(options) {
    parser_.header_limit(kMaxHeadBytes);
    parser_.body_limit(options.max_body);
  }

  void start() {
    resolver_.async_resolve(url_.address.host, std::to_string(url_.address.port),
                            [this](beast::error_code ec, const tcp::resolver::results_type& to) {
                              if (ec) return fail("cannot resolve " + url_.address.host, ec);
                              connect(to);
                            });
  }

  void cancel() {
    resolver_.cancel();
    beast::error_code ignored;
    beast::get_lowest_layer(stream_).socket().close(ignored);
  }

  const std::optional<Result<std::string>>& outcome() const { return outcome_; }

 private:
  void connect(const tcp::resolver::results_type& to) {
    beast::get_lowest_layer(stream_).async_connect(
        to, [this](beast::error_code ec, const tcp::endpoint&) {
          if (ec) return fail("", ec);
          if constexpr (std::is_same_v<Stream, TlsStream>) {
            handshake();
          } else {
            send();
          }
        });
  }

  void handshake() {
    if constexpr (std::is_same_v<Stream, TlsStream>) {
      // SNI for a name (not for an address), and the certificate must carry the name or address.
      if (url_.address.kind == ListenAddress::Kind::HostName) {
        SSL_set_tlsext_host_name(stream_.native_handle(), url_.address.host.c_str());
      }
      stream_.set_verify_mode(ssl::verify_peer);
      stream_.set_verify_callback(ssl::host_name_verification(url_.address.host));
      stream_.async_handshake(ssl::stream_base::client, [this](beast::error_code ec) {
        if (ec) return fail("TLS", ec);
        send();
      });
    }
  }

  void send() {
    request_ = {http::verb::get, url_.target, 11};
    request_.set(http::field::host, url_.address.text());
    request_.set(http::field::user_agent, options_.user_agent);
    request_.set(http::field::accept, "text/plain");
    request_.set(http::field::connection, "close");
    if (!url_.user.empty()) {
      request_.set(http::field::authorization,
                   "Basic " + base64(url_.user + ":" + options_.password));
    }
    http::async_write(stream_, request_, [this](beast::error_code ec, size_t) {
      if (ec) return fail("", ec);
      receive();
    });
  }

  void receive() {
    http::async_read(stream_, buffer_, parser_, [this](beast::error_code ec, size_t) {
      if (ec == http::error::body_limit) {
        return finish(Error{"the answer is larger than " + size_text(options_.max_body)});
      }
      if (ec == http::error::header_limit) {
        return finish(Error{"the answer's head is larger than " + size_text(kMaxHeadBytes)});
      }
      if (ec) return fail("", ec);
      const auto& response = parser_.get();
      if (response.result() != http::status::ok) {
        return finish(Error{"HTTP " + std::to_string(response.result_int()) + " " +
                            printable_text(std::string(response.reason()), 200)});
      }
      if (const auto encoding = response.find(http::field::content_encoding);
          encoding != response.end() && !beast::iequals(encoding->value(), "identity")) {
        return finish(Error{"the answer is encoded (" +
                            printable_text(std::string(encoding->value()), 100) +
                            "), and none was asked for"});
      }
      finish(std::string(parser_.release().body()));
    });
  }

  void fail(const std::string& what, const beast::error_code& ec) {
    if (outcome_) return;
    const std::string words = lowercase_first(ec.message());
    finish(Error{what.empty() ? words : what + ": " + words, kExitCannotRun});
  }

  void finish(Result<std::string> outcome) {
    if (!outcome_) outcome_ = std::move(outcome);
  }

  tcp::resolver resolver_;
  Stream& stream_;
  const MetricsUrl& url_;
  const FetchOptions& options_;
  http::request<http::empty_body> request_;
  beast::flat_buffer buffer_{size_t{1} << 20};
  http::response_parser<http::string_body> parser_;
  std::optional<Result<std::string>> outcome_;
};

template <class Stream>
Result<std::string> run(asio::io_context& io, Stream& stream, const MetricsUrl& url,
                        const FetchOptions& options, const std::function<bool()>& keep_going) {
  Exchange<Stream> exchange(io, stream, url, options);
  exchange.start();
  const auto deadline = std::chrono::steady_clock::now() + options.timeout;
  while (!exchange.outcome()) {
    if (!keep_going()) {
      exchange.cancel();
      return Error{"cancelled", kExitCannotRun};
    }
    if (std::chrono::steady_clock::now() >= deadline) {
      exchange.cancel();
      return Error{"no answer within " + std::to_string(options.timeout.count() / 1000) + " s",
                   kExitCannotRun};
    }
    io.run_for(kPollStep);
    if (io.stopped()) io.restart();
  }
  return *exchange.outcome();
}

Result<std::string> get(const MetricsUrl& url, const FetchOptions& options,
                        const std::function<bool()>& keep_going) {
  asio::io_context io;
  if (!url.tls) {
    beast::tcp_stream stream(io);
    return run(io, stream, url, options, keep_going);
  }
  ssl::context context(ssl::context::tls_client);
  beast::error_code ec;
  if (options.ca_pem.empty()) {
    context.set_default_verify_paths(ec);
    if (ec) return Error{"the system's CA store: " + lowercase_first(ec.message()), kExitCannotRun};
  } else {
    context.add_certificate_authority(asio::buffer(options.ca_pem), ec);
    if (ec)
      return Error{"the CA file holds no usable certificate: " + lowercase_first(ec.message())};
  }
  TlsStream stream(io, context);
  return run(io, stream, url, options, keep_going);
}

}  // namespace

Result<std::string> fetch_metrics(const MetricsUrl& url, const FetchOptions& options,
                                  const std::function<bool()>& keep_going) {
  auto got = get(url, options, keep_going);
  if (got.ok()) return got;
  return Error{on_one_line("GET " + url.text() + ": " + got.error().text), got.error().exit_code};
}

}  // namespace hucprof
