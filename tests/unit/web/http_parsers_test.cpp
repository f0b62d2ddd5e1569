#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "web/rate_limiter.h"
#include "web_input/accept_encoding.h"
#include "web_input/basic_auth.h"
#include "web_input/http_target.h"

namespace hucprof {
namespace {

using ::testing::HasSubstr;

RequestTarget target_ok(std::string_view text) {
  auto parsed = parse_request_target(text);
  if (!parsed.ok()) {
    ADD_FAILURE() << text << ": " << parsed.error().text;
    return {};
  }
  return parsed.value();
}

std::string target_error(std::string_view text) {
  auto parsed = parse_request_target(text);
  if (parsed.ok()) {
    ADD_FAILURE() << text << " parsed, expected an error";
    return "";
  }
  return parsed.error().text;
}

// RFC 9112 3.2: origin form and absolute form; RFC 3986 2.1 percent-encoding.
TEST(RequestTarget, OriginAndAbsoluteForms) {
  EXPECT_EQ(target_ok("/metrics").path, "/metrics");
  EXPECT_EQ(target_ok("http://node:9478/metrics").path, "/metrics");
  EXPECT_EQ(target_ok("HTTPS://node/metrics?a=1").path, "/metrics");
  EXPECT_EQ(target_ok("http://node").path, "/");
  EXPECT_EQ(target_ok("http://node?x=1").query.find("x")->second, "1");
  EXPECT_EQ(target_ok("/a%20b%2Fc").path, "/a b/c");
  EXPECT_EQ(target_ok("/metrics#frag").path, "/metrics");
  const auto query = target_ok("/p?seconds=30&a=1&a=2&empty=&flag&x=%26%3D&plus=a+b").query;
  EXPECT_EQ(query.find("seconds")->second, "30");
  EXPECT_EQ(query.count("a"), 2u);
  EXPECT_EQ(query.find("empty")->second, "");
  EXPECT_EQ(query.find("flag")->second, "");
  EXPECT_EQ(query.find("x")->second, "&=");
  EXPECT_EQ(query.find("plus")->second, "a b");
  EXPECT_EQ(target_ok("/p?&&a=1&&").query.size(), 1u);
}

TEST(RequestTarget, ErrorsAreWordsFor400) {
  EXPECT_EQ(target_error("metrics"), "request target is not a path");
  EXPECT_EQ(target_error("*"), "request target is not a path");
  EXPECT_EQ(target_error("node:9478"), "request target is not a path");
  EXPECT_EQ(target_error(""), "request target is not a path");
  EXPECT_EQ(target_error("http://"), "absolute URL without a host");
  EXPECT_EQ(target_error("http:///metrics"), "absolute URL without a host");
  EXPECT_EQ(target_error("/a%2"), "bad percent-encoding in the path");
  EXPECT_EQ(target_error("/a%g0"), "bad percent-encoding in the path");
  EXPECT_EQ(target_error("/a%00b"), "NUL byte in the path");
  EXPECT_THAT(target_error("/p?seconds=%ZZ"), HasSubstr("query parameter \"seconds\""));
  // The 400 body quotes the parameter on one line, control bytes as \xNN.
  EXPECT_EQ(target_error("/p?a\x1b[2J%ZZ=1"),
            "bad percent-encoding in query parameter \"a\\x1b[2J%ZZ\"");
}

// RFC 7617 2: "Basic " + base64(user ":" password); the scheme is case-insensitive.
TEST(BasicAuthorization, ParsesTheRfc7617Form) {
  auto credentials = parse_basic_authorization("Basic YWxhZGRpbjpvcGVuc2VzYW1l");  // RFC 7617's
  ASSERT_TRUE(credentials);
  EXPECT_EQ(credentials->user, "aladdin");
  EXPECT_EQ(credentials->password, "opensesame");
  credentials = parse_basic_authorization("basic   dTpwOnE=");  // "u:p:q": the password has a colon
  ASSERT_TRUE(credentials);
  EXPECT_EQ(credentials->user, "u");
  EXPECT_EQ(credentials->password, "p:q");
  EXPECT_FALSE(parse_basic_authorization(""));
  EXPECT_FALSE(parse_basic_authorization("Basic"));
  EXPECT_FALSE(parse_basic_authorization("Bearer YWxhZGRpbjpvcGVuc2VzYW1l"));
  EXPECT_FALSE(parse_basic_authorization("BasicYWxhZGRpbjpvcGVuc2VzYW1l"));
  EXPECT_FALSE(parse_basic_authorization("Basic !!!!"));
  EXPECT_FALSE(parse_basic_authorization("Basic bm9jb2xvbg=="));  // "nocolon"
}

TEST(BasicAuthorization, Base64IsStrict) {
  EXPECT_EQ(base64_decode("TWFu"), "Man");  // RFC 4648 section 10 vectors
  EXPECT_EQ(base64_decode("Zm9vYmE="), "fooba");
  EXPECT_EQ(base64_decode("Zm9vYg=="), "foob");
  EXPECT_EQ(base64_decode("Zm9vYg"), "foob");
  EXPECT_EQ(base64_decode(""), "");
  EXPECT_FALSE(base64_decode("Z"));
  EXPECT_FALSE(base64_decode("Zm9v YmFy"));
}

// Test vectors of Openwall's crypt_blowfish (the reference bcrypt) and one htpasswd made.
TEST(Bcrypt, MatchesReferenceVectorsThroughLibcrypt) {
  EXPECT_TRUE(
      bcrypt_matches("$2a$05$CCCCCCCCCCCCCCCCCCCCC.E5YPO9kmyuRGyh0XouQYb4YMJKvyOeW", "U*U"));
  EXPECT_FALSE(
      bcrypt_matches("$2a$05$CCCCCCCCCCCCCCCCCCCCC.E5YPO9kmyuRGyh0XouQYb4YMJKvyOeW", "U*V"));
  EXPECT_TRUE(
      bcrypt_matches("$2a$05$CCCCCCCCCCCCCCCCCCCCC.VGOzA784oUp/Z0DY336zx7pLYAy0lwK", "U*U*"));
  EXPECT_TRUE(
      bcrypt_matches("$2y$05$/OK.fbVrR/bpIqNJ5ianF.Sa7shbm4.OzKpvFnX1pQLmQW96oUlCq", "\xa3"));
  EXPECT_TRUE(
      bcrypt_matches("$2b$05$/OK.fbVrR/bpIqNJ5ianF.Sa7shbm4.OzKpvFnX1pQLmQW96oUlCq", "\xa3"));
  EXPECT_TRUE(bcrypt_matches("$2y$05$/OK.fbVrR/bpIqNJ5ianF.CE5elHaaO4EbggVDjb8P19RukzXSM3e",
                             "\xff\xff\xa3"));
  EXPECT_TRUE(bcrypt_matches("$2a$05$CCCCCCCCCCCCCCCCCCCCC.7uG0VCzI2bS7j6ymqJi9CdcdxiRTWNy", ""));
  EXPECT_TRUE(
      bcrypt_matches("$2y$10$3vXzJfnm2q5WxIXgWxaFt.h0pnkq.9HxIJmBoMc.8j/CCCUXszow.", "secret"));
  EXPECT_FALSE(
      bcrypt_matches("$2y$10$3vXzJfnm2q5WxIXgWxaFt.h0pnkq.9HxIJmBoMc.8j/CCCUXszow.", "Secret"));
  // A NUL would cut the password short in crypt_r: "U*U\0anything" must not pass as "U*U".
  EXPECT_FALSE(bcrypt_matches("$2a$05$CCCCCCCCCCCCCCCCCCCCC.E5YPO9kmyuRGyh0XouQYb4YMJKvyOeW",
                              std::string_view("U*U\0x", 5)));
  EXPECT_FALSE(bcrypt_matches("not a hash", "x"));
}

TEST(BasicAuthenticator, VerifiesOnceThenCachesBriefly) {
  BasicAuthenticator auth(std::map<std::string, std::string>{
      {"u", "$2a$05$CCCCCCCCCCCCCCCCCCCCC.E5YPO9kmyuRGyh0XouQYb4YMJKvyOeW"}});
  const auto t0 = BasicAuthenticator::Clock::now();
  const BasicCredentials right{"u", "U*U"}, wrong{"u", "U*V"}, stranger{"x", "U*U"};
  EXPECT_FALSE(auth.cached(right, t0));
  EXPECT_TRUE(auth.verify(right, t0));
  EXPECT_TRUE(auth.cached(right, t0 + std::chrono::minutes(1)));
  EXPECT_FALSE(auth.cached(right, t0 + BasicAuthenticator::kCacheTtl + std::chrono::seconds(1)));
  EXPECT_FALSE(auth.verify(wrong, t0));
  EXPECT_FALSE(auth.cached(wrong, t0));  // failures are never remembered as successes
  EXPECT_FALSE(auth.verify(stranger, t0));
  EXPECT_FALSE(auth.cached(stranger, t0));
}

TEST(AcceptEncoding, GzipUnlessRefused) {
  EXPECT_TRUE(accepts_gzip("gzip"));
  EXPECT_TRUE(accepts_gzip("deflate, GZIP;q=0.5"));
  EXPECT_TRUE(accepts_gzip("*"));
  EXPECT_TRUE(accepts_gzip("x-gzip"));
  EXPECT_FALSE(accepts_gzip(""));
  EXPECT_FALSE(accepts_gzip("identity"));
  EXPECT_FALSE(accepts_gzip("gzip;q=0"));
  EXPECT_FALSE(accepts_gzip("gzip; q=0.000"));
  EXPECT_FALSE(accepts_gzip("*, gzip;q=0"));
  EXPECT_FALSE(accepts_gzip("*;q=0"));
  EXPECT_TRUE(accepts_gzip("gzip;q=0.001"));
}

TEST(RateLimiter, BurstThenOnePerInterval) {
  const auto t0 = RateLimiter::Clock::now();
  RateLimiter limiter(std::chrono::milliseconds(100), 3, t0);
  EXPECT_TRUE(limiter.allow(t0));
  EXPECT_TRUE(limiter.allow(t0));
  EXPECT_TRUE(limiter.allow(t0));
  EXPECT_FALSE(limiter.allow(t0));
  EXPECT_FALSE(limiter.allow(t0 + std::chrono::milliseconds(50)));
  EXPECT_TRUE(limiter.allow(t0 + std::chrono::milliseconds(100)));
  EXPECT_FALSE(limiter.allow(t0 + std::chrono::milliseconds(110)));
  // A long pause refills to the burst, not beyond.
  const auto later = t0 + std::chrono::seconds(10);
  for (int i = 0; i < 3; ++i) EXPECT_TRUE(limiter.allow(later));
  EXPECT_FALSE(limiter.allow(later));
}

}  // namespace
}  // namespace hucprof
