// RFC 9112's framing rules on a request head: where the body ends (6.3) and which host (3.2).
#include "web_input/http_framing.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace hucprof {
namespace {

using ::testing::HasSubstr;

RequestHead head(std::vector<std::string_view> te, std::vector<std::string_view> host = {"x"},
                 unsigned version = 11, bool content_length = false) {
  return {version, std::move(te), std::move(host), content_length};
}

TEST(HttpFraming, PlainAndChunkedRequestsPass) {
  EXPECT_FALSE(request_framing_error(head({})));
  EXPECT_FALSE(request_framing_error(head({"chunked"})));
  EXPECT_FALSE(request_framing_error(head({"Chunked"})));
  EXPECT_FALSE(request_framing_error(head({" chunked ,"})));
  EXPECT_FALSE(request_framing_error(head({}, {}, 10))) << "HTTP/1.0 needs no Host";
  EXPECT_FALSE(request_framing_error(head({}, {""}))) << "an empty Host is allowed (3.2)";
  EXPECT_FALSE(request_framing_error(head({}, {"[::1]:9478"})));
}

TEST(HttpFraming, ATransferEncodingNotEndingInChunkedIs400) {
  // What the server ignored before, reading the body as the next request.
  for (std::string_view te :
       {"gzip", "xchunked", "chunked, identity", "identity", "", "chunked;x=1"}) {
    const auto error = request_framing_error(head({te}));
    ASSERT_TRUE(error) << te;
    EXPECT_EQ(error->status, 400) << te;
    EXPECT_THAT(error->reason, HasSubstr("RFC 9112 6.3")) << te;
  }
  const auto split = request_framing_error(head({"chunked", "gzip"}));
  ASSERT_TRUE(split) << "the last field's last coding counts";
  EXPECT_EQ(split->status, 400);
}

TEST(HttpFraming, ChunkedTwiceOr10OrWithContentLengthIs400) {
  EXPECT_THAT(request_framing_error(head({"chunked", "chunked"}))->reason,
              HasSubstr("more than once"));
  EXPECT_THAT(request_framing_error(head({"chunked"}, {"x"}, 10))->reason, HasSubstr("HTTP/1.0"));
  EXPECT_THAT(request_framing_error(head({"chunked"}, {"x"}, 11, true))->reason,
              HasSubstr("Content-Length"));
}

TEST(HttpFraming, AnotherCodingBeforeChunkedIs501) {
  const auto error = request_framing_error(head({"gzip, chunked"}));
  ASSERT_TRUE(error);
  EXPECT_EQ(error->status, 501);
  EXPECT_THAT(error->reason, HasSubstr("\"gzip\" is not implemented"));
}

TEST(HttpFraming, HostMissingTwiceOrMalformedIs400) {
  EXPECT_THAT(request_framing_error(head({}, {}))->reason, HasSubstr("no Host header"));
  EXPECT_THAT(request_framing_error(head({}, {"a", "b"}))->reason, HasSubstr("more than one Host"));
  EXPECT_THAT(request_framing_error(head({}, {"a", "a"}, 10))->reason,
              HasSubstr("more than one Host"));
  const auto bad = request_framing_error(head({}, {"a b/c"}));
  ASSERT_TRUE(bad);
  EXPECT_THAT(bad->reason, HasSubstr("\"a b/c\" is not a host"));
  EXPECT_THAT(request_framing_error(head({}, {std::string_view("a\x1b", 2)}))->reason,
              HasSubstr("\\x1b"));
}

}  // namespace
}  // namespace hucprof
