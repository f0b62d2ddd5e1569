#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>
#include <zlib.h>

#include <memory>
#include <string>
#include <vector>

#include "raw_http.h"
#include "web/metrics_server.h"

namespace hucprof {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;
using ::testing::StartsWith;
using testing_http::RawConnection;
using testing_http::request_once;
using namespace std::chrono_literals;

const char* const kSeries =
    "\nusercopy_checks_total{callsite=\"udp_recvmsg\",syscall=\"recvfrom\",direction=\"to_user\"} "
    "7\n";

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
  if (!started.ok()) {
    ADD_FAILURE() << started.error().text;
    return nullptr;
  }
  return std::move(started).value();
}

Error start_error(const std::string& address, const std::string& web_config = "") {
  auto started =
      MetricsServer::start(WebOptions{{address}, web_config}, collectable_with_one_check());
  if (started.ok()) {
    ADD_FAILURE() << address << " started, expected an error";
    return {};
  }
  return started.error();
}

bool ipv6_loopback_usable() {
  const int fd = socket(AF_INET6, SOCK_STREAM, 0);
  if (fd < 0) return false;
  sockaddr_in6 addr{};
  addr.sin6_family = AF_INET6;
  addr.sin6_addr = in6addr_loopback;
  const bool ok = bind(fd, reinterpret_cast<const sockaddr*>(&addr), sizeof(addr)) == 0;
  close(fd);
  return ok;
}

std::string gunzip(const std::string& data) {
  z_stream stream{};
  if (inflateInit2(&stream, 15 + 16) != Z_OK) return "";
  std::string out;
  char buffer[16384];
  stream.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(data.data()));
  stream.avail_in = static_cast<uInt>(data.size());
  int rc = Z_OK;
  while (rc == Z_OK) {
    stream.next_out = reinterpret_cast<Bytef*>(buffer);
    stream.avail_out = sizeof(buffer);
    rc = inflate(&stream, Z_NO_FLUSH);
    out.append(buffer, sizeof(buffer) - stream.avail_out);
  }
  inflateEnd(&stream);
  return rc == Z_STREAM_END ? out : "";
}

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
  static int port() { return server_->port(); }
  static MetricsServer* server_;
};
MetricsServer* LiveServer::server_ = nullptr;

TEST_F(LiveServer, ServesMetricsInTheTextFormat) {
  const auto response = request_once(port(), "GET", "/metrics");
  ASSERT_TRUE(response);
  EXPECT_EQ(response->status, 200);
  EXPECT_EQ(response->header("content-type"), "text/plain; version=0.0.4; charset=utf-8");
  EXPECT_THAT(response->body, HasSubstr(kSeries));
  EXPECT_THAT(response->body, HasSubstr("\n# TYPE process_cpu_seconds_total counter\n"));
}

TEST_F(LiveServer, UnknownPathsAre404WhateverTheMethod) {
  for (const char* method : {"GET", "HEAD", "POST"}) {
    for (const char* path :
         {"/nope", "/index.html", "/metrics/", "/../etc/passwd", "/metrics%2F"}) {
      SCOPED_TRACE(std::string(method) + " " + path);
      const auto response = request_once(port(), method, path);
      ASSERT_TRUE(response);
      EXPECT_EQ(response->status, 404);
    }
  }
}

TEST_F(LiveServer, LandingPageLinksToMetrics) {
  const auto response = request_once(port(), "GET", "/");
  ASSERT_TRUE(response);
  EXPECT_EQ(response->status, 200);
  EXPECT_THAT(response->header("content-type"), HasSubstr("text/html"));
  EXPECT_THAT(response->body, HasSubstr("<a href=\"metrics\">"));
}

// Issue 9: HEAD /metrics was a 404.
TEST_F(LiveServer, HeadSendsTheHeadersOfGetAndNoBody) {
  auto connection = RawConnection::open(port());
  ASSERT_TRUE(connection);
  // HEAD then GET on one connection: a body after HEAD would be read as the GET's response.
  ASSERT_TRUE(
      connection->send("HEAD /metrics HTTP/1.1\r\nHost: x\r\n\r\n"
                       "GET /metrics HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n"));
  const auto head = connection->read_response(10s, /*no_body=*/true);
  ASSERT_TRUE(head);
  EXPECT_EQ(head->status, 200);
  EXPECT_EQ(head->header("content-type"), "text/plain; version=0.0.4; charset=utf-8");
  EXPECT_GT(std::stoul(head->header("content-length")), 100u);
  const auto get = connection->read_response(10s);
  ASSERT_TRUE(get) << "pending: " << connection->pending().substr(0, 200);
  EXPECT_EQ(get->status_line.substr(0, 15), "HTTP/1.1 200 OK");
  EXPECT_THAT(get->body, HasSubstr(kSeries));
}

// Issue 9: POST/OPTIONS /metrics were 404 (not 405).
TEST_F(LiveServer, OtherMethodsOnAKnownPathAre405WithAllow) {
  for (const char* method : {"POST", "OPTIONS", "PUT", "DELETE", "PATCH"}) {
    for (const char* path : {"/metrics", "/"}) {
      SCOPED_TRACE(std::string(method) + " " + path);
      const auto response = request_once(port(), method, path);
      ASSERT_TRUE(response);
      EXPECT_EQ(response->status, 405);
      EXPECT_EQ(response->header("allow"), "GET, HEAD");
    }
  }
}

// Issue 9: absolute-form "GET http://host/metrics" closed the connection without an answer.
TEST_F(LiveServer, AbsoluteFormTargetsAreServed) {
  for (const std::string& target : std::vector<std::string>{
           "http://localhost/metrics", "http://127.0.0.1:" + std::to_string(port()) + "/metrics",
           "HTTP://example.org/metrics?x=1"}) {
    SCOPED_TRACE(target);
    const auto response = request_once(port(), "GET", target);
    ASSERT_TRUE(response);
    EXPECT_EQ(response->status, 200);
    EXPECT_THAT(response->body, HasSubstr(kSeries));
  }
  const auto percent = request_once(port(), "GET", "/%6Detrics");  // "m", encoded
  ASSERT_TRUE(percent);
  EXPECT_EQ(percent->status, 200);
  const auto bad = request_once(port(), "GET", "/metrics%zz");
  ASSERT_TRUE(bad);
  EXPECT_EQ(bad->status, 400);
}

// Issue 9: every response closed the connection.
TEST_F(LiveServer, KeepAliveServesSeveralRequestsOnOneConnection) {
  auto connection = RawConnection::open(port());
  ASSERT_TRUE(connection);
  for (int i = 0; i < 3; ++i) {
    SCOPED_TRACE(i);
    ASSERT_TRUE(connection->send("GET /metrics HTTP/1.1\r\nHost: x\r\n\r\n"));
    const auto response = connection->read_response(10s);
    ASSERT_TRUE(response);
    EXPECT_EQ(response->status, 200);
    EXPECT_NE(response->header("connection"), "close");
    EXPECT_THAT(response->body, HasSubstr(kSeries));
  }
  // Pipelined: two requests in one write, two answers in order.
  ASSERT_TRUE(connection->send(
      "GET / HTTP/1.1\r\nHost: x\r\n\r\nGET /metrics HTTP/1.1\r\nHost: x\r\n\r\n"));
  const auto first = connection->read_response(10s);
  const auto second = connection->read_response(10s);
  ASSERT_TRUE(first && second);
  EXPECT_THAT(first->body, HasSubstr("<html>"));
  EXPECT_THAT(second->body, HasSubstr(kSeries));
  // HTTP/1.0 without keep-alive: answered in 1.0, then closed.
  auto old = RawConnection::open(port());
  ASSERT_TRUE(old && old->send("GET /metrics HTTP/1.0\r\n\r\n"));
  const auto response = old->read_response(10s);
  ASSERT_TRUE(response);
  EXPECT_THAT(response->status_line, StartsWith("HTTP/1.0 200"));
  EXPECT_TRUE(old->closed_within(5s));
}

TEST_F(LiveServer, GzipWhenTheClientAcceptsIt) {
  const auto plain = request_once(port(), "GET", "/metrics");
  const auto zipped = request_once(port(), "GET", "/metrics", false, "Accept-Encoding: gzip\r\n");
  ASSERT_TRUE(plain && zipped);
  EXPECT_EQ(plain->header("content-encoding"), "");
  EXPECT_EQ(zipped->header("content-encoding"), "gzip");
  EXPECT_EQ(zipped->header("vary"), "Accept-Encoding");
  EXPECT_LT(zipped->body.size(), plain->body.size());
  EXPECT_THAT(gunzip(zipped->body), HasSubstr(kSeries));
  const auto refused =
      request_once(port(), "GET", "/metrics", false, "Accept-Encoding: gzip;q=0\r\n");
  ASSERT_TRUE(refused);
  EXPECT_EQ(refused->header("content-encoding"), "");
}

// Issue 9: two idle TCP connections stopped /metrics for everyone (civetweb had 2 threads).
TEST_F(LiveServer, IdleAndSlowClientsDoNotBlockMetrics) {
  std::vector<std::unique_ptr<RawConnection>> held;
  for (int i = 0; i < 50; ++i) {
    auto idle = RawConnection::open(port());
    ASSERT_TRUE(idle);
    held.push_back(std::move(idle));
    auto slow = RawConnection::open(port());
    ASSERT_TRUE(slow);
    ASSERT_TRUE(slow->send("GET /metrics HTTP/1.1\r\nHost: x\r\nX-Slow: "));  // never finished
    held.push_back(std::move(slow));
  }
  // Issue 9's client: `curl --max-time 5`. Blocked scrapes waited for civetweb's 30 s timeout;
  // 5 s tells blocked from served on any machine without being a speed goal (bench/ has those).
  for (int i = 0; i < 5; ++i) {
    auto connection = RawConnection::open(port());
    ASSERT_TRUE(connection);
    ASSERT_TRUE(connection->send("GET /metrics HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n"));
    const auto response = connection->read_response(5s);
    ASSERT_TRUE(response) << "no answer within 5 s with 100 idle/slow connections open";
    EXPECT_EQ(response->status, 200);
  }
}

TEST_F(LiveServer, OversizedHeadersAre431AndTheConnectionCloses) {
  auto connection = RawConnection::open(port());
  ASSERT_TRUE(connection);
  const std::string big(1 << 20, 'a');
  connection->send("GET /metrics HTTP/1.1\r\nHost: x\r\nX-Big: " + big + "\r\n\r\n");
  const auto response = connection->read_response(10s);
  ASSERT_TRUE(response);
  EXPECT_EQ(response->status, 431);
  EXPECT_TRUE(connection->closed_within(5s));

  std::string many = "GET /metrics HTTP/1.1\r\nHost: x\r\n";
  for (int i = 0; i < 2000; ++i) many += "X-H" + std::to_string(i) + ": v\r\n";
  auto second = RawConnection::open(port());
  ASSERT_TRUE(second);
  second->send(many + "\r\n");
  const auto too_many = second->read_response(10s);
  ASSERT_TRUE(too_many);
  EXPECT_EQ(too_many->status, 431);
}

TEST_F(LiveServer, GarbageIsABadRequest) {
  auto connection = RawConnection::open(port());
  ASSERT_TRUE(connection && connection->send("HELLO\r\n\r\n"));
  const auto response = connection->read_response(10s);
  ASSERT_TRUE(response);
  EXPECT_EQ(response->status, 400);
  EXPECT_TRUE(connection->closed_within(5s));
}

// What run registers beside /metrics: the profile endpoint and the web view, which takes "/"
// from the landing page.
TEST(MetricsServer, RoutesServeBesideMetricsAndMayTakeTheLandingPage) {
  auto server = start_ok("127.0.0.1:0");
  ASSERT_TRUE(server);
  server->add_route("/test/echo", [](const HttpRequest& r) {
    HttpResponse out;
    out.status = 400;
    out.body = r.method + " " + r.path + " a=" + r.query.find("a")->second;
    out.headers = {{"X-Test", "yes"}};
    return out;
  });
  server->add_route("/", [](const HttpRequest&) {
    HttpResponse out;
    out.body = "the web view";
    return out;
  });
  const auto echo = request_once(server->port(), "GET", "/test/echo?a=x%20y&b=1");
  ASSERT_TRUE(echo);
  EXPECT_EQ(echo->status, 400);
  EXPECT_EQ(echo->header("x-test"), "yes");
  EXPECT_EQ(echo->body, "GET /test/echo a=x y");
  const auto root = request_once(server->port(), "GET", "/");
  ASSERT_TRUE(root);
  EXPECT_EQ(root->body, "the web view");
  const auto metrics = request_once(server->port(), "GET", "/metrics");
  ASSERT_TRUE(metrics);
  EXPECT_THAT(metrics->body, HasSubstr(kSeries));
  const auto deeper = request_once(server->port(), "GET", "/test/echo/more");
  ASSERT_TRUE(deeper);
  EXPECT_EQ(deeper->status, 404);
}

TEST_F(LiveServer, PortTakenIsAnErrorNamingTheFlag) {
  const std::string address = "127.0.0.1:" + std::to_string(port());
  const Error error = start_error(address);
  EXPECT_EQ(error.exit_code, 1);
  EXPECT_THAT(error.text, StartsWith("--web.listen-address \"" + address + "\": "));
  EXPECT_THAT(error.text, HasSubstr("address already in use"));
  const auto response = request_once(port(), "GET", "/metrics");  // still serving
  ASSERT_TRUE(response);
  EXPECT_EQ(response->status, 200);
}

TEST(MetricsServer, AddressErrorsNameTheFlagWithTheirExitCode) {
  Error error = start_error("localhost:notaport");
  EXPECT_EQ(error.exit_code, 2);
  EXPECT_EQ(error.text,
            "--web.listen-address \"localhost:notaport\": port \"notaport\" is not a number in "
            "0..65535");
  error = start_error("no-such-host.invalid:0");
  EXPECT_EQ(error.exit_code, 2);
  EXPECT_THAT(error.text,
              StartsWith("--web.listen-address \"no-such-host.invalid:0\": cannot resolve host"));
  // An address this host does not have: a fact about this host, exit 1.
  error = start_error("192.0.2.1:0");
  EXPECT_EQ(error.exit_code, 1);
  EXPECT_THAT(error.text,
              StartsWith("--web.listen-address \"192.0.2.1:0\": cannot listen on 192.0.2.1:0: "));
}

TEST(MetricsServer, WebConfigErrorsAreUsageErrors) {
  const Error error = start_error("127.0.0.1:0", "/nonexistent/web.yml");
  EXPECT_EQ(error.exit_code, 2);
  EXPECT_EQ(error.text,
            "/nonexistent/web.yml: cannot read web config file: no such file or directory");
}

// Issue 9: "[::1]:port" answered "civetweb has no IPv6 support".
TEST(MetricsServer, ServesIpv6LoopbackAndDualStack) {
  if (!ipv6_loopback_usable()) GTEST_SKIP() << "this host has no IPv6 loopback to test with";
  auto v6 = start_ok("[::1]:0");
  ASSERT_TRUE(v6);
  EXPECT_EQ(v6->bound_address(), "[::1]:" + std::to_string(v6->port()));
  auto response = request_once(v6->port(), "GET", "/metrics", /*ipv6=*/true);
  ASSERT_TRUE(response);
  EXPECT_THAT(response->body, HasSubstr(kSeries));

  // ":0" is every interface: one socket that IPv4 and IPv6 clients both reach.
  auto any = start_ok(":0");
  ASSERT_TRUE(any);
  EXPECT_EQ(any->bound_address(), "[::]:" + std::to_string(any->port()));
  for (bool ipv6 : {false, true}) {
    response = request_once(any->port(), "GET", "/metrics", ipv6);
    ASSERT_TRUE(response) << (ipv6 ? "IPv6" : "IPv4");
    EXPECT_EQ(response->status, 200);
  }
}

TEST(MetricsServer, RenderMetricsIsAPureHandler) {
  const auto collectable = collectable_with_one_check();
  HttpRequest request;
  request.path = "/metrics";
  HttpResponse response = render_metrics(*collectable, request);
  EXPECT_EQ(response.status, 200);
  EXPECT_THAT(response.body, HasSubstr(kSeries));
  request.headers["accept-encoding"] = "br, gzip;q=0.5";
  response = render_metrics(*collectable, request);
  EXPECT_THAT(gunzip(response.body), HasSubstr(kSeries));
}

// The snapshot's text is rendered once per update, process_* at every scrape.
TEST(MetricsServer, ANewSnapshotIsServedAtTheNextScrape) {
  const auto collectable = collectable_with_one_check();
  const std::string first = collectable->render();
  EXPECT_THAT(first, HasSubstr(kSeries));
  EXPECT_THAT(first, HasSubstr("\nprocess_cpu_seconds_total "));
  EXPECT_EQ(collectable->render().substr(0, first.find("# HELP process_")),
            first.substr(0, first.find("# HELP process_")));
  v1::Snapshot next;
  auto* c = next.add_checks();
  c->set_callsite("udp_recvmsg");
  c->set_syscall("recvfrom");
  c->set_direction("to_user");
  c->set_calls(8);
  collectable->update(next);
  const std::string second = collectable->render();
  EXPECT_THAT(second, HasSubstr("direction=\"to_user\"} 8\n"));
  EXPECT_THAT(second, Not(HasSubstr(kSeries)));
  EXPECT_THAT(second, HasSubstr("\nprocess_cpu_seconds_total "));
}

}  // namespace
}  // namespace hucprof
