#pragma once
// A deliberately dumb HTTP/1.1 client on a raw socket: the bytes on the wire are written by the
// test, so what is checked is the server's behaviour against RFC 9112, not a library's idea of it.
#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cctype>
#include <chrono>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

namespace hucprof::testing_http {

struct RawResponse {
  std::string status_line;
  int status = 0;
  std::map<std::string, std::string> headers;  // names lower-cased
  std::string body;

  std::string header(const std::string& name) const {
    const auto it = headers.find(name);
    return it == headers.end() ? "" : it->second;
  }
};

class RawConnection {
 public:
  // nullptr when the connection is refused.
  static std::unique_ptr<RawConnection> open(int port, bool ipv6 = false) {
    const int fd = socket(ipv6 ? AF_INET6 : AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0) return nullptr;
    int rc;
    if (ipv6) {
      sockaddr_in6 addr{};
      addr.sin6_family = AF_INET6;
      addr.sin6_port = htons(static_cast<uint16_t>(port));
      addr.sin6_addr = in6addr_loopback;
      rc = connect(fd, reinterpret_cast<const sockaddr*>(&addr), sizeof(addr));
    } else {
      sockaddr_in addr{};
      addr.sin_family = AF_INET;
      addr.sin_port = htons(static_cast<uint16_t>(port));
      addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
      rc = connect(fd, reinterpret_cast<const sockaddr*>(&addr), sizeof(addr));
    }
    if (rc != 0) {
      close(fd);
      return nullptr;
    }
    return std::unique_ptr<RawConnection>(new RawConnection(fd));
  }
  ~RawConnection() { close(fd_); }

  bool send(std::string_view bytes) {
    while (!bytes.empty()) {
      const ssize_t n = ::send(fd_, bytes.data(), bytes.size(), MSG_NOSIGNAL);
      if (n <= 0) return false;
      bytes.remove_prefix(static_cast<size_t>(n));
    }
    return true;
  }

  // One response: the head, then Content-Length bytes of body (none for HEAD or when told so),
  // or everything up to the close when there is no Content-Length. nullopt on timeout or when
  // the connection closes before a whole head arrived.
  std::optional<RawResponse> read_response(std::chrono::milliseconds timeout,
                                           bool no_body = false) {
    const auto deadline = std::chrono::steady_clock::now() + timeout;
    size_t head_end;
    while ((head_end = buffer_.find("\r\n\r\n")) == std::string::npos) {
      if (!fill(deadline)) return std::nullopt;
    }
    RawResponse response;
    const std::string head = buffer_.substr(0, head_end);
    buffer_.erase(0, head_end + 4);
    size_t line_end = head.find("\r\n");
    response.status_line = head.substr(0, line_end);
    if (response.status_line.size() >= 12)
      response.status = std::atoi(response.status_line.c_str() + 9);
    while (line_end != std::string::npos) {
      const size_t start = line_end + 2;
      line_end = head.find("\r\n", start);
      const std::string line =
          head.substr(start, line_end == std::string::npos ? std::string::npos : line_end - start);
      const size_t colon = line.find(':');
      if (colon == std::string::npos) continue;
      std::string name = line.substr(0, colon);
      for (char& c : name) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
      size_t value_start = colon + 1;
      while (value_start < line.size() && line[value_start] == ' ') ++value_start;
      response.headers[name] = line.substr(value_start);
    }
    if (no_body) return response;
    if (response.headers.count("content-length")) {
      const size_t length = std::stoul(response.headers["content-length"]);
      while (buffer_.size() < length) {
        if (!fill(deadline)) return std::nullopt;
      }
      response.body = buffer_.substr(0, length);
      buffer_.erase(0, length);
    } else {
      while (fill(deadline)) {
      }
      response.body = std::move(buffer_);
      buffer_.clear();
    }
    return response;
  }

  // True when the server closes the connection within `timeout` (reads return 0 or an error).
  bool closed_within(std::chrono::milliseconds timeout) {
    const auto deadline = std::chrono::steady_clock::now() + timeout;
    while (std::chrono::steady_clock::now() < deadline) {
      switch (fill_once(deadline)) {
        case Fill::Closed:
          return true;
        case Fill::Data:
          continue;
        case Fill::Timeout:
          return false;
      }
    }
    return false;
  }

  // Bytes received beyond the responses read so far.
  const std::string& pending() const { return buffer_; }
  int fd() const { return fd_; }

 private:
  explicit RawConnection(int fd) : fd_(fd) {}
  enum class Fill { Data, Closed, Timeout };

  Fill fill_once(std::chrono::steady_clock::time_point deadline) {
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
        deadline - std::chrono::steady_clock::now());
    if (left.count() <= 0) return Fill::Timeout;
    pollfd pfd{fd_, POLLIN, 0};
    if (poll(&pfd, 1, static_cast<int>(left.count())) <= 0) return Fill::Timeout;
    char chunk[65536];
    const ssize_t n = recv(fd_, chunk, sizeof(chunk), 0);
    if (n <= 0) return Fill::Closed;
    buffer_.append(chunk, static_cast<size_t>(n));
    return Fill::Data;
  }
  bool fill(std::chrono::steady_clock::time_point deadline) {
    return fill_once(deadline) == Fill::Data;
  }

  int fd_;
  std::string buffer_;
};

// GET/HEAD/... of `path` on a fresh connection, "Connection: close".
inline std::optional<RawResponse> request_once(int port, const std::string& method,
                                               const std::string& target, bool ipv6 = false,
                                               const std::string& extra_headers = "") {
  auto connection = RawConnection::open(port, ipv6);
  if (!connection) return std::nullopt;
  if (!connection->send(method + " " + target + " HTTP/1.1\r\nHost: localhost\r\n" + extra_headers +
                        "Connection: close\r\n\r\n")) {
    return std::nullopt;
  }
  return connection->read_response(std::chrono::seconds(10), method == "HEAD");
}

}  // namespace hucprof::testing_http
