// `hucprof top --from URL`: what a URL may say, checked without touching the network.
#include "core/text/metrics_url.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace hucprof {
namespace {

using ::testing::HasSubstr;

MetricsUrl url_ok(std::string_view text) {
  auto url = parse_metrics_url(text);
  if (!url.ok()) {
    ADD_FAILURE() << text << ": " << url.error().text;
    return {};
  }
  return url.value();
}

std::string url_error(std::string_view text) {
  auto url = parse_metrics_url(text);
  EXPECT_FALSE(url.ok()) << text;
  return url.ok() ? "" : url.error().text;
}

TEST(MetricsUrl, MetricsWhenNoPathIsGiven) {
  const MetricsUrl url = url_ok("http://127.0.0.1:9478");
  EXPECT_FALSE(url.tls);
  EXPECT_EQ(url.address.host, "127.0.0.1");
  EXPECT_EQ(url.address.port, 9478);
  EXPECT_EQ(url.target, "/metrics");
  EXPECT_EQ(url.text(), "http://127.0.0.1:9478/metrics");
  EXPECT_EQ(url_ok("http://127.0.0.1:9478/").target, "/metrics");
  EXPECT_EQ(url_ok("http://127.0.0.1:9478/custom/path?x=1#frag").target, "/custom/path?x=1");
  EXPECT_EQ(url_ok("http://127.0.0.1:9478?x=1").target, "/metrics?x=1");
}

TEST(MetricsUrl, PortsAsUrlsHaveThem) {
  EXPECT_EQ(url_ok("http://node1").address.port, 80);
  EXPECT_EQ(url_ok("HTTPS://node1.example.org").address.port, 443);
  EXPECT_TRUE(url_ok("HTTPS://node1.example.org").tls);
  const MetricsUrl v6 = url_ok("https://[::1]:9478/metrics");
  EXPECT_EQ(v6.address.kind, ListenAddress::Kind::IPv6);
  EXPECT_EQ(v6.address.host, "::1");
  EXPECT_EQ(v6.text(), "https://[::1]:9478/metrics");
  EXPECT_EQ(url_ok("http://[::1]").address.port, 80);
}

// The user goes with basic auth; a password never comes from the URL (ps shows argv).
TEST(MetricsUrl, AUserButNoPassword) {
  const MetricsUrl url = url_ok("https://prom%40eus@node1:9478");
  EXPECT_EQ(url.user, "prom@eus");
  EXPECT_EQ(url.text(), "https://node1:9478/metrics");
  EXPECT_THAT(url_error("http://alice:secret@node1:9478"),
              HasSubstr("the password in HUCPROF_FROM_PASSWORD"));
  EXPECT_THAT(url_error("http://@node1:9478"), HasSubstr("empty"));
  EXPECT_THAT(url_error("http://a%4@node1:9478"), HasSubstr("two hex digits"));
  EXPECT_THAT(url_error("http://a b@node1:9478"), HasSubstr("percent-encode"));
}

TEST(MetricsUrl, WhatIsNoUrlOfADaemon) {
  EXPECT_THAT(url_error("127.0.0.1:9478"), HasSubstr("is not a URL"));
  EXPECT_THAT(url_error("ftp://node1"), HasSubstr("\"ftp\" is not http or https"));
  EXPECT_THAT(url_error("http://:9478"), HasSubstr("names no host"));
  EXPECT_THAT(url_error("http://[::]:9478"), HasSubstr("names no host"));
  EXPECT_THAT(url_error("http://node1:0"), HasSubstr("port 0"));
  EXPECT_THAT(url_error("http://node1:99999"), HasSubstr("not a number in 0..65535"));
  EXPECT_THAT(url_error("http://::1:9478"), HasSubstr("needs brackets"));
  EXPECT_THAT(url_error("http://node1:9478/a b"), HasSubstr("percent-encode"));
  EXPECT_THAT(url_error("http://node1:9478/\x1b[2J"), HasSubstr("control character"));
  EXPECT_THAT(url_error("http://" + std::string(9000, 'a')), HasSubstr("longer than 8192"));
  // What the user gave is quoted printable, never raw.
  const std::string error = url_error("\x1b]0;x\x07://node1");
  EXPECT_EQ(error.find('\x1b'), std::string::npos) << error;
}

}  // namespace
}  // namespace hucprof
