// The pages `hucprof run` adds beside /metrics (the web view on "/", the profile on
// /debug/pprof/usercopy), behind the real server, under what a careless or hostile client
// sends: other methods, query strings they do not use, broken and hostile query values.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <atomic>
#include <memory>
#include <string>

#include "export/views/pprof_handler.h"
#include "export/views/web_view.h"
#include "raw_http.h"
#include "web/metrics_server.h"

namespace hucprof {
namespace {

using ::testing::HasSubstr;
using ::testing::StartsWith;
using testing_http::request_once;

class WebRoutes : public ::testing::Test {
 protected:
  void SetUp() override {
    auto started = MetricsServer::start("127.0.0.1:0", std::make_shared<SnapshotCollectable>());
    if (!started.ok()) FAIL() << started.error().text;
    server_ = std::move(started).value();
    ProfileSource source{[] { return StackProfile{}; }, [this] { ++drains_; }, {}, {}, {}};
    server_->add_route("/debug/pprof/usercopy", make_pprof_handler(std::move(source)));
    server_->add_route("/", make_web_view_handler([this] {
                         ++pages_;
                         return WebViewInput{};
                       }));
  }

  std::optional<testing_http::RawResponse> get(const std::string& target,
                                               const std::string& method = "GET") {
    return request_once(server_->port(), method, target);
  }

  std::unique_ptr<MetricsServer> server_;
  std::atomic<int> drains_{0};
  std::atomic<int> pages_{0};
};

TEST_F(WebRoutes, OtherMethodsAre405AndReachNoHandler) {
  for (const char* method : {"POST", "PUT", "DELETE", "OPTIONS", "PATCH", "TRACE"}) {
    for (const char* target :
         {"/", "/?seconds=1", "/debug/pprof/usercopy", "/debug/pprof/usercopy?seconds=1"}) {
      SCOPED_TRACE(std::string(method) + " " + target);
      const auto response = get(target, method);
      ASSERT_TRUE(response);
      EXPECT_EQ(response->status, 405);
      EXPECT_EQ(response->header("allow"), "GET, HEAD");
    }
  }
  EXPECT_EQ(pages_, 0);
  EXPECT_EQ(drains_, 0);
}

TEST_F(WebRoutes, TheWebViewIgnoresQueriesItDoesNotUse) {
  for (const std::string& target :
       {std::string("/?seconds=abc"), std::string("/?a&&b=&c=%20"),
        std::string("/?") + std::string(4000, 'x'), std::string("/?")}) {
    SCOPED_TRACE(target.substr(0, 40));
    const auto response = get(target);
    ASSERT_TRUE(response);
    EXPECT_EQ(response->status, 200);
    EXPECT_THAT(response->header("content-type"), StartsWith("text/html"));
    EXPECT_THAT(response->body, StartsWith("<!DOCTYPE html>"));
  }
  const auto head = request_once(server_->port(), "HEAD", "/?x=1");
  ASSERT_TRUE(head);
  EXPECT_EQ(head->status, 200);
  EXPECT_EQ(head->body, "");
}

TEST_F(WebRoutes, BrokenQueriesAre400BeforeAnyHandler) {
  for (const char* target : {"/?x=%zz", "/debug/pprof/usercopy?seconds=%g1"}) {
    SCOPED_TRACE(target);
    const auto response = get(target);
    ASSERT_TRUE(response);
    EXPECT_EQ(response->status, 400);
    EXPECT_THAT(response->body, StartsWith("bad request: bad percent-encoding in query parameter"));
  }
  EXPECT_EQ(pages_, 0);
  EXPECT_EQ(drains_, 0);
}

TEST_F(WebRoutes, BadProfileSecondsAre400NamingTheValueOnOneLine) {
  const struct {
    const char* target;
    const char* body;
  } cases[] = {
      {"/debug/pprof/usercopy?seconds=abc",
       "seconds: \"abc\" is not a whole number of seconds from 1 to 600\n"},
      {"/debug/pprof/usercopy?seconds=0",
       "seconds: \"0\" is not a whole number of seconds from 1 to 600\n"},
      {"/debug/pprof/usercopy?seconds=+5",
       "seconds: \" 5\" is not a whole number of seconds from 1 to 600\n"},
      {"/debug/pprof/usercopy?seconds=%0A1%1B",
       "seconds: \"\\x0a1\\x1b\" is not a whole number of seconds from 1 to 600\n"},
      {"/debug/pprof/usercopy?seconds=1&seconds=2", "seconds: given twice\n"},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.target);
    const auto response = get(c.target);
    ASSERT_TRUE(response);
    EXPECT_EQ(response->status, 400);
    EXPECT_EQ(response->body, c.body);
  }
  EXPECT_EQ(drains_, 0) << "a refused request drains nothing";
}

TEST_F(WebRoutes, TheProfileIgnoresOtherParameters) {
  const auto response = get("/debug/pprof/usercopy?debug=1&gc=1");
  ASSERT_TRUE(response);
  EXPECT_EQ(response->status, 200);
  ASSERT_GE(response->body.size(), 2u);
  EXPECT_EQ(static_cast<unsigned char>(response->body[0]), 0x1f);  // gzip
  EXPECT_EQ(static_cast<unsigned char>(response->body[1]), 0x8b);
  EXPECT_EQ(drains_, 0) << "the cumulative profile is served as it stands";
}

}  // namespace
}  // namespace hucprof
