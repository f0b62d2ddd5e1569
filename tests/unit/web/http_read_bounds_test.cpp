// What a client sends on a raw socket against the bounds of docs/web-server.md ("Bounds on a
// connection"): each overrun gets its 4xx and a closed connection, the server's memory stays
// put, and the next scrape on a new connection is answered. The first ones were found by an
// attacker campaign (issue 37): one request with a 64 KiB trailer aborted the daemon.
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cerrno>
#include <fstream>
#include <string>

#include "raw_http.h"
#include "test_server.h"

extern char** environ;

namespace hucprof {
namespace {

using ::testing::HasSubstr;
using ::testing::StartsWith;
using testing_http::RawConnection;
using testing_http::RawResponse;
using testing_http::request_once;
using testing_http::start_server;
using testing_http::text;
using namespace std::chrono_literals;

constexpr size_t kMiB = 1 << 20;
const std::string kChunkedGetHead =
    "GET /metrics HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n";

std::unique_ptr<HttpServer> start_scrape_server() {
  auto server = start_server();
  if (server) {
    server->add_route(
        "/metrics", [](const HttpRequest&) { return text("scraped"); }, RouteLane::Inline);
  }
  return server;
}

bool scrape_answered(int port) {
  const auto response = request_once(port, "GET", "/metrics");
  return response && response->status == 200;
}

// `bytes` on a new connection; the one response, and whether the connection closed after it.
struct Answer {
  std::optional<RawResponse> response;
  bool closed = false;
  std::string after;  // what came after the response: nothing, after a refusal
};
Answer send_once(int port, const std::string& bytes) {
  Answer answer;
  auto connection = RawConnection::open(port);
  if (!connection || !connection->send(bytes)) return answer;
  answer.response = connection->read_response(10s);
  answer.closed = connection->closed_within(5s);
  answer.after = connection->pending();
  return answer;
}

void expect_refused(int port, const std::string& bytes, int status, const std::string& says) {
  const Answer answer = send_once(port, bytes);
  ASSERT_TRUE(answer.response) << "no answer";
  EXPECT_EQ(answer.response->status, status) << answer.response->body;
  EXPECT_THAT(answer.response->body, HasSubstr(says));
  EXPECT_EQ(answer.response->header("connection"), "close");
  EXPECT_TRUE(answer.closed);
  EXPECT_EQ(answer.after, "") << "nothing after the refusal";
  EXPECT_TRUE(scrape_answered(port)) << "the next scrape on a new connection";
}

// VmHWM of /proc/PID/status ("self" or a number), in KiB: the most the process ever held.
size_t peak_rss_kib(const std::string& pid) {
  std::ifstream status("/proc/" + pid + "/status");
  std::string line;
  while (std::getline(status, line)) {
    if (line.rfind("VmHWM:", 0) == 0) return std::stoul(line.substr(6));
  }
  ADD_FAILURE() << "no VmHWM in /proc/" << pid << "/status";
  return 0;
}

// D2's attack: a chunk-size line of "1;" and then `total` bytes of extension, streamed until the
// server answers or stops reading. Returns the bytes of extension the kernel took by then.
size_t stream_chunk_extension(RawConnection& connection, size_t total) {
  if (!connection.send(kChunkedGetHead + "1;")) return 0;
  const std::string piece(64 * 1024, 'e');
  size_t sent = 0;
  while (sent < total) {
    pollfd pfd{connection.fd(), POLLIN | POLLOUT, 0};
    // Neither readable nor writable for a minute: the server holds the bytes unread.
    if (poll(&pfd, 1, 60'000) <= 0) break;
    if (pfd.revents & (POLLIN | POLLERR | POLLHUP)) break;  // answered or closed
    const ssize_t n = ::send(connection.fd(), piece.data(), std::min(piece.size(), total - sent),
                             MSG_NOSIGNAL | MSG_DONTWAIT);
    if (n < 0 && errno != EAGAIN && errno != EINTR) break;  // reset by the server
    if (n > 0) sent += static_cast<size_t>(n);
  }
  return sent;
}

void expect_flood_refused(int port) {
  auto connection = RawConnection::open(port);
  ASSERT_TRUE(connection);
  const size_t sent = stream_chunk_extension(*connection, 256 * kMiB);
  // The kernel's socket buffers take some MiB before the server's answer shows.
  EXPECT_LT(sent, 128 * kMiB) << "the server read on past the chunk-size line's bound";
  const auto response = connection->read_response(10s);
  ASSERT_TRUE(response) << "no answer after " << sent << " bytes";
  EXPECT_EQ(response->status, 400);
  EXPECT_THAT(response->body, HasSubstr("chunk-size line longer than 1024 bytes"));
  EXPECT_TRUE(scrape_answered(port));
}

// D1: the daemon aborted on an uncaught std::length_error ("field value too large") from the
// trailer's field; 60,000 bytes got a 200 though the head may take 16 KiB.
TEST(HttpReadBounds, OversizedTrailersAre431AndTheServerGoesOn) {
  auto server = start_scrape_server();
  ASSERT_TRUE(server);
  const int port = server->port();
  for (const std::string& trailer :
       {"X-T: " + std::string(65536, 't'), std::string(70000, 'n') + ": v",
        "X-T: " + std::string(60000, 't')}) {
    SCOPED_TRACE(trailer.size());
    expect_refused(port, kChunkedGetHead + "0\r\n" + trailer + "\r\n\r\n", 431, "too large");
  }
  std::string small;
  for (int i = 0; i < 400; ++i)
    small += "X-" + std::to_string(i) + ": " + std::string(40, 'v') + "\r\n";
  expect_refused(port, kChunkedGetHead + "0\r\n" + small + "\r\n", 431, "too large");
}

TEST(HttpReadBounds, ChunkSizeLinesAreBounded) {
  auto server = start_scrape_server();
  ASSERT_TRUE(server);
  const int port = server->port();
  expect_refused(port, kChunkedGetHead + std::string(100'000, 'f') + "\r\n", 400,
                 "chunk-size line longer than 1024 bytes");
  // 2^64: Beast's parse_hex refuses what does not fit its 64 bits.
  expect_refused(port, kChunkedGetHead + "10000000000000000\r\nx\r\n0\r\n\r\n", 400, "bad request");
  expect_refused(port, kChunkedGetHead + "ffffffffffffffff\r\n", 413, "body too large");
}

// D2: 256 MiB of chunk extension took the daemon from 93 MB to 534 MB.
TEST(HttpReadBounds, A256MiBChunkExtensionIsRefusedAtItsBoundWithoutTheMemory) {
  auto server = start_scrape_server();
  ASSERT_TRUE(server);
  const size_t before = peak_rss_kib("self");
  expect_flood_refused(server->port());
  EXPECT_LT(peak_rss_kib("self"), before + 32 * 1024) << "KiB";
}

// D13: Beast refused every version but 1.0 and 1.1 as malformed, so 505 was never sent.
TEST(HttpReadBounds, HttpVersions) {
  auto server = start_scrape_server();
  ASSERT_TRUE(server);
  const int port = server->port();
  const Answer minor =
      send_once(port, "GET /metrics HTTP/1.2\r\nHost: x\r\nConnection: close\r\n\r\n");
  ASSERT_TRUE(minor.response);
  EXPECT_EQ(minor.response->status_line, "HTTP/1.1 200 OK") << "RFC 9110 6.2: served as 1.1";
  EXPECT_EQ(minor.response->body, "scraped");
  for (const char* version : {"HTTP/2.0", "HTTP/0.9", "HTTP/3.0"}) {
    SCOPED_TRACE(version);
    expect_refused(port, std::string("GET /metrics ") + version + "\r\nHost: x\r\n\r\n", 505,
                   version);
  }
}

// A request refused while reading leaves the connection's framing unknown: what was pipelined
// behind it is never served.
TEST(HttpReadBounds, NothingPipelinedAfterARefusedRequestIsServed) {
  auto server = start_scrape_server();
  ASSERT_TRUE(server);
  const std::string next = "GET /metrics HTTP/1.1\r\nHost: x\r\n\r\n";
  for (const std::string& refused :
       {kChunkedGetHead + "0\r\nX-T: " + std::string(20000, 't') + "\r\n\r\n",
        kChunkedGetHead + "1;" + std::string(2000, 'e') + "\r\nx\r\n0\r\n\r\n",
        std::string("GET /metrics HTTP/2.0\r\nHost: x\r\n\r\n")}) {
    SCOPED_TRACE(refused.substr(0, 80));
    const Answer answer = send_once(server->port(), refused + next + next);
    ASSERT_TRUE(answer.response);
    EXPECT_GE(answer.response->status, 400);
    EXPECT_TRUE(answer.closed);
    EXPECT_EQ(answer.after, "") << "a pipelined request was answered";
  }
  // Within the bounds, the next request is the next request.
  const Answer fine =
      send_once(server->port(), kChunkedGetHead + "1;e\r\nx\r\n0\r\nX-T: t\r\n\r\n" + next +
                                    "GET /metrics HTTP/1.1\r\nHost: x\r\n"
                                    "Connection: close\r\n\r\n");
  ASSERT_TRUE(fine.response);
  EXPECT_EQ(fine.response->status, 200);
  EXPECT_THAT(fine.after, StartsWith("HTTP/1.1 200 OK")) << "the two pipelined behind it";
}

#ifdef HUC_WEB_SERVE
// huc_web_serve: hucprof's web front (MetricsServer, as `hucprof run` serves it) in a process
// of its own, whose peak RSS is its own.
class WebServe {
 public:
  WebServe() {
    int out[2];
    if (pipe2(out, O_CLOEXEC) != 0) return;
    posix_spawn_file_actions_t actions;
    posix_spawn_file_actions_init(&actions);
    posix_spawn_file_actions_adddup2(&actions, out[1], STDOUT_FILENO);
    const char* argv[] = {HUC_WEB_SERVE, "--web.listen-address", "127.0.0.1:0", nullptr};
    const int rc = posix_spawn(&pid_, HUC_WEB_SERVE, &actions, nullptr,
                               const_cast<char* const*>(argv), environ);
    posix_spawn_file_actions_destroy(&actions);
    close(out[1]);
    if (rc != 0) {
      pid_ = -1;
      close(out[0]);
      return;
    }
    std::string line;
    char c;
    while (read(out[0], &c, 1) == 1 && c != '\n') line += c;
    close(out[0]);
    const std::string prefix = "listening on 127.0.0.1:";
    if (line.rfind(prefix, 0) == 0) port_ = std::stoi(line.substr(prefix.size()));
  }
  ~WebServe() {
    if (pid_ > 0 && waitpid(pid_, nullptr, WNOHANG) == 0) {
      kill(pid_, SIGKILL);
      waitpid(pid_, nullptr, 0);
    }
  }
  int port() const { return port_; }
  std::string pid() const { return std::to_string(pid_); }
  bool running() const { return waitpid(pid_, nullptr, WNOHANG) == 0; }
  // SIGTERM: the exit status of a clean stop.
  int stop() {
    kill(pid_, SIGTERM);
    int status = 0;
    waitpid(pid_, &status, 0);
    pid_ = -1;
    return status;
  }

 private:
  pid_t pid_ = -1;
  int port_ = 0;
};

TEST(HttpReadBounds, TheWebFrontProcessSurvivesD1AndD2InItsOwnMemory) {
  WebServe serve;
  ASSERT_GT(serve.port(), 0) << "huc_web_serve did not start";
  const size_t before = peak_rss_kib(serve.pid());
  expect_refused(serve.port(),
                 kChunkedGetHead + "0\r\nX-T: " + std::string(65536, 't') + "\r\n\r\n", 431,
                 "too large");
  ASSERT_TRUE(serve.running());
  expect_flood_refused(serve.port());
  const size_t after = peak_rss_kib(serve.pid());
  EXPECT_LT(after, before + 32 * 1024) << "KiB of peak RSS, from " << before;
  const int status = serve.stop();
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << "status " << status;
}
#endif

}  // namespace
}  // namespace hucprof
