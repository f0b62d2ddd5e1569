// What orchestrators and several scrapers ask of the server: Prometheus' /-/healthy and
// /-/ready, the metrics at --web.telemetry-path, several listen addresses served alike, and a
// socket handed over already listening (systemd socket activation).
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <memory>
#include <string>

#include "raw_http.h"
#include "web/metrics_server.h"

namespace hucprof {
namespace {

using ::testing::HasSubstr;
using ::testing::StartsWith;
using testing_http::request_once;

std::unique_ptr<MetricsServer> start_ok(WebOptions options) {
  auto started = MetricsServer::start(options, std::make_shared<SnapshotCollectable>());
  if (!started.ok()) {
    ADD_FAILURE() << started.error().text;
    return nullptr;
  }
  return std::move(started).value();
}

TEST(OperationsEndpoints, HealthyAtOnceReadyOnlyAfterTheFirstDrain) {
  auto server = start_ok(WebOptions{{"127.0.0.1:0"}, ""});
  ASSERT_TRUE(server);
  const auto healthy = request_once(server->port(), "GET", "/-/healthy");
  ASSERT_TRUE(healthy);
  EXPECT_EQ(healthy->status, 200);
  EXPECT_EQ(healthy->body, "hucprof is Healthy.\n");
  const auto before = request_once(server->port(), "GET", "/-/ready");
  ASSERT_TRUE(before);
  EXPECT_EQ(before->status, 503);
  EXPECT_THAT(before->body, StartsWith("hucprof is not ready"));
  server->set_ready();
  const auto after = request_once(server->port(), "GET", "/-/ready");
  ASSERT_TRUE(after);
  EXPECT_EQ(after->status, 200);
  EXPECT_EQ(after->body, "hucprof is Ready.\n");
  // The kubelet may probe with HEAD; other methods are refused as on every page.
  const auto head = request_once(server->port(), "HEAD", "/-/ready");
  ASSERT_TRUE(head);
  EXPECT_EQ(head->status, 200);
  EXPECT_EQ(head->body, "");
  const auto post = request_once(server->port(), "POST", "/-/healthy");
  ASSERT_TRUE(post);
  EXPECT_EQ(post->status, 405);
}

TEST(OperationsEndpoints, MetricsAtTheTelemetryPathOnly) {
  WebOptions options{{"127.0.0.1:0"}, ""};
  options.telemetry_path = "/probe/metrics";
  auto server = start_ok(options);
  ASSERT_TRUE(server);
  const auto metrics = request_once(server->port(), "GET", "/probe/metrics");
  ASSERT_TRUE(metrics);
  EXPECT_EQ(metrics->status, 200);
  EXPECT_THAT(metrics->header("content-type"), StartsWith("text/plain; version=0.0.4"));
  const auto old = request_once(server->port(), "GET", "/metrics");
  ASSERT_TRUE(old);
  EXPECT_EQ(old->status, 404);
  // The landing page links to where the metrics are (relative: a proxy may add a prefix).
  const auto landing = request_once(server->port(), "GET", "/");
  ASSERT_TRUE(landing);
  EXPECT_THAT(landing->body, HasSubstr("<a href=\"probe/metrics\">Metrics</a>"));
}

TEST(OperationsEndpoints, EveryListenAddressServesTheSamePages) {
  auto server = start_ok(WebOptions{{"127.0.0.1:0", "127.0.0.1:0"}, ""});
  ASSERT_TRUE(server);
  const auto addresses = server->bound_addresses();
  ASSERT_EQ(addresses.size(), 2u);
  EXPECT_NE(addresses[0], addresses[1]);
  server->add_route("/extra", [](const HttpRequest&) { return HttpResponse{}; });
  server->set_ready();
  for (const std::string& address : addresses) {
    const int port = std::stoi(address.substr(address.rfind(':') + 1));
    for (const char* target : {"/metrics", "/-/ready", "/extra"}) {
      SCOPED_TRACE(address + target);
      const auto response = request_once(port, "GET", target);
      ASSERT_TRUE(response);
      EXPECT_EQ(response->status, 200);
    }
  }
}

TEST(OperationsEndpoints, ABadSecondAddressBindsNothing) {
  auto started = MetricsServer::start(WebOptions{{"127.0.0.1:0", "127.0.0.1:99999"}, ""},
                                      std::make_shared<SnapshotCollectable>());
  ASSERT_FALSE(started.ok());
  const Error& error = started.error();
  EXPECT_EQ(error.exit_code, 2);
  EXPECT_THAT(error.text, StartsWith("--web.listen-address \"127.0.0.1:99999\": "));
}

TEST(OperationsEndpoints, ServesASocketThatIsAlreadyListening) {
  // What systemd hands over with socket activation: bound and listening before hucprof runs.
  const int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  ASSERT_GE(fd, 0);
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  ASSERT_EQ(bind(fd, reinterpret_cast<sockaddr*>(&address), sizeof(address)), 0);
  ASSERT_EQ(listen(fd, 16), 0);
  socklen_t length = sizeof(address);
  ASSERT_EQ(getsockname(fd, reinterpret_cast<sockaddr*>(&address), &length), 0);
  WebOptions options;
  options.listen_fds = {fd};
  auto server = start_ok(options);
  ASSERT_TRUE(server);
  EXPECT_EQ(server->port(), ntohs(address.sin_port));
  const auto response = request_once(server->port(), "GET", "/-/healthy");
  ASSERT_TRUE(response);
  EXPECT_EQ(response->status, 200);
}

TEST(OperationsEndpoints, ASocketThatIsNotTcpIsRefusedByName) {
  int pair[2];
  ASSERT_EQ(socketpair(AF_UNIX, SOCK_STREAM, 0, pair), 0);
  WebOptions options;
  options.listen_fds = {pair[0]};
  auto started = MetricsServer::start(options, std::make_shared<SnapshotCollectable>());
  ASSERT_FALSE(started.ok());
  EXPECT_EQ(started.error().text, "--web.systemd-socket: socket " + std::to_string(pair[0]) +
                                      " is not an IPv4 or IPv6 socket");
  close(pair[0]);
  close(pair[1]);
}

}  // namespace
}  // namespace hucprof
