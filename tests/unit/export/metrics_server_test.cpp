#include <arpa/inet.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <memory>
#include <string>

#include "export/http_types.h"
#include "export/landing_page.h"
#include "export/metrics_server.h"

namespace hucprof {
namespace {

using ::testing::ContainsRegex;
using ::testing::HasSubstr;
using ::testing::StartsWith;

// A minimal HTTP/1.0 client on a raw socket: the response as text, "" if no connection.
std::string http_get(int port, const std::string& path) {
  const int fd = socket(AF_INET, SOCK_STREAM, 0);
  if (fd < 0) return "";
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(static_cast<uint16_t>(port));
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  std::string response;
  if (connect(fd, reinterpret_cast<const sockaddr*>(&addr), sizeof(addr)) == 0) {
    const std::string request = "GET " + path + " HTTP/1.0\r\nHost: 127.0.0.1\r\n\r\n";
    if (write(fd, request.data(), request.size()) == static_cast<ssize_t>(request.size())) {
      char buffer[4096];
      for (ssize_t n; (n = read(fd, buffer, sizeof(buffer))) > 0;) response.append(buffer, n);
    }
  }
  close(fd);
  return response;
}

std::shared_ptr<SnapshotCollectable> collectable_with_one_check() {
  v1::Snapshot snapshot;
  auto* c = snapshot.add_checks();
  c->set_callsite("udp_recvmsg");
  c->set_syscall("recvfrom");
  c->set_direction("to_user");
  c->set_calls(7);
  auto collectable = std::make_shared<SnapshotCollectable>();
  collectable->update(snapshot);
  return collectable;
}

std::unique_ptr<MetricsServer> start_ok(const std::string& address) {
  auto started = MetricsServer::start(address, collectable_with_one_check());
  if (auto* error = std::get_if<std::string>(&started)) {
    ADD_FAILURE() << *error;
    return nullptr;
  }
  return std::move(std::get<std::unique_ptr<MetricsServer>>(started));
}

std::string start_error(const std::string& address) {
  auto started = MetricsServer::start(address, collectable_with_one_check());
  if (std::holds_alternative<std::unique_ptr<MetricsServer>>(started)) {
    ADD_FAILURE() << address << " started, expected an error";
    return "";
  }
  return std::get<std::string>(started);
}

// One server for all tests that need a live one: civetweb takes up to 2 s to stop (its
// listener polls with a 2 s quantum), which adds up per test.
class LiveServer : public ::testing::Test {
 protected:
  static void SetUpTestSuite() { server_ = start_ok("127.0.0.1:0").release(); }
  static void TearDownTestSuite() {
    delete server_;
    server_ = nullptr;
  }
  void SetUp() override {
    ASSERT_NE(server_, nullptr);
    ASSERT_GT(server_->port(), 0);
  }
  static MetricsServer* server_;
};
MetricsServer* LiveServer::server_ = nullptr;

// civetweb answers errors in the request's HTTP version, prometheus-cpp always says 1.1.
const char* const kOk = "^HTTP/1\\.[01] 200 OK\r\n";
const char* const kNotFound = "^HTTP/1\\.[01] 404 ";

TEST_F(LiveServer, ServesMetrics) {
  const std::string response = http_get(server_->port(), "/metrics");
  EXPECT_THAT(response, ContainsRegex(kOk));
  EXPECT_THAT(response, HasSubstr("text/plain"));
  EXPECT_THAT(response, HasSubstr("\nusercopy_checks_total{callsite=\"udp_recvmsg\","
                                  "syscall=\"recvfrom\",direction=\"to_user\"} 7\n"));
  EXPECT_THAT(response, HasSubstr("\n# TYPE process_cpu_seconds_total counter\n"));
}

TEST_F(LiveServer, UnknownPathsAre404) {
  EXPECT_THAT(http_get(server_->port(), "/nope"), ContainsRegex(kNotFound));
  EXPECT_THAT(http_get(server_->port(), "/index.html"), ContainsRegex(kNotFound));
}

TEST_F(LiveServer, LandingPageLinksToMetrics) {
  const std::string response = http_get(server_->port(), "/");
  if (!kLandingPageBuilt) {
    EXPECT_THAT(response, ContainsRegex(kNotFound));
    GTEST_SKIP() << "built without HUCPROF_LANDING_PAGE: \"/\" is a 404";
  }
  EXPECT_THAT(response, ContainsRegex(kOk));
  EXPECT_THAT(response, HasSubstr("text/html"));
  EXPECT_THAT(response, HasSubstr("<a href=\"metrics\">"));
}

TEST_F(LiveServer, PortTakenIsAnErrorNamingTheFlag) {
  const std::string address = "127.0.0.1:" + std::to_string(server_->port());
  const std::string error = start_error(address);
  EXPECT_THAT(error, StartsWith("--web.listen-address \"" + address + "\": "));
  EXPECT_THAT(error, HasSubstr("address already in use"));
  // The running server is unaffected.
  EXPECT_THAT(http_get(server_->port(), "/metrics"), ContainsRegex(kOk));
}

TEST_F(LiveServer, RoutesServeTheirHandlerWithDecodedQuery) {
  server_->add_route("/test/echo", [](const HttpRequest& r) {
    HttpResponse out;
    out.status = 400;
    out.body = r.method + " " + r.path + " a=" + r.query.find("a")->second;
    out.headers = {{"X-Test", "yes"}};
    return out;
  });
  const std::string response = http_get(server_->port(), "/test/echo?a=x%20y&b=1");
  EXPECT_THAT(response, StartsWith("HTTP/1.1 400"));
  EXPECT_THAT(response, HasSubstr("X-Test: yes\r\n"));
  EXPECT_THAT(response, HasSubstr("GET /test/echo a=x y"));
  EXPECT_THAT(http_get(server_->port(), "/metrics"), HasSubstr("usercopy_checks_total"));
  EXPECT_THAT(http_get(server_->port(), "/test/echo/more"), ContainsRegex(kNotFound));
}

TEST(MetricsServer, BadAddressIsAnErrorNamingTheFlag) {
  EXPECT_EQ(start_error("localhost:notaport"),
            "--web.listen-address \"localhost:notaport\": port \"notaport\" is not a number in "
            "0..65535");
  EXPECT_THAT(start_error("9478"), StartsWith("--web.listen-address \"9478\": missing port"));
  // An address this host does not have.
  EXPECT_THAT(start_error("192.0.2.1:0"),
              StartsWith("--web.listen-address \"192.0.2.1:0\": cannot listen on 192.0.2.1:0: "));
}

TEST(MetricsServer, Ipv6LoopbackServesOrSaysWhy) {
  auto started = MetricsServer::start("[::1]:0", collectable_with_one_check());
  if (const auto* error = std::get_if<std::string>(&started)) {
    // Debian's civetweb is built without IPv6; the message must say so, not "failed".
    EXPECT_THAT(*error, StartsWith("--web.listen-address \"[::1]:0\": "));
    EXPECT_THAT(*error, HasSubstr("IPv6"));
  } else {
    EXPECT_GT(std::get<std::unique_ptr<MetricsServer>>(started)->port(), 0);
  }
}

}  // namespace
}  // namespace hucprof
