#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "export/listen_address.h"

namespace hucprof {
namespace {

using ::testing::HasSubstr;
using Family = ListenAddress::Family;

ListenAddress parse_ok(std::string_view text) {
  auto parsed = parse_listen_address(text);
  if (const auto* error = std::get_if<std::string>(&parsed)) {
    ADD_FAILURE() << text << ": " << *error;
    return {};
  }
  return std::get<ListenAddress>(parsed);
}

std::string parse_error(std::string_view text) {
  auto parsed = parse_listen_address(text);
  if (std::holds_alternative<ListenAddress>(parsed)) {
    ADD_FAILURE() << text << " parsed, expected an error";
    return {};
  }
  return std::get<std::string>(parsed);
}

TEST(ListenAddress, TranslatesToCivetwebSpelling) {
  struct Case {
    const char* input;
    Family family;
    const char* host;
    uint16_t port;
    const char* spec_with_ipv6;
    const char* spec_without_ipv6;
  };
  for (const Case& c : std::initializer_list<Case>{
           {"127.0.0.1:9478", Family::IPv4, "127.0.0.1", 9478, "127.0.0.1:9478", "127.0.0.1:9478"},
           {":9478", Family::Any, "", 9478, "+9478", "9478"},
           {"0.0.0.0:80", Family::IPv4, "0.0.0.0", 80, "0.0.0.0:80", "0.0.0.0:80"},
           {"[::1]:9478", Family::IPv6, "::1", 9478, "[::1]:9478", "[::1]:9478"},
           {"[::]:9478", Family::Any, "", 9478, "+9478", "9478"},
           {"127.0.0.1:0", Family::IPv4, "127.0.0.1", 0, "127.0.0.1:0", "127.0.0.1:0"},
           {"localhost:65535", Family::IPv4, "127.0.0.1", 65535, "127.0.0.1:65535",
            "127.0.0.1:65535"},
       }) {
    SCOPED_TRACE(c.input);
    const ListenAddress address = parse_ok(c.input);
    EXPECT_EQ(address.family, c.family);
    EXPECT_EQ(address.host, c.host);
    EXPECT_EQ(address.port, c.port);
    EXPECT_EQ(civetweb_port_spec(address, true), c.spec_with_ipv6);
    EXPECT_EQ(civetweb_port_spec(address, false), c.spec_without_ipv6);
  }
}

TEST(ListenAddress, ErrorsSayWhatIsWrong) {
  EXPECT_THAT(parse_error("localhost:notaport"),
              HasSubstr("port \"notaport\" is not a number in 0..65535"));
  EXPECT_THAT(parse_error("127.0.0.1:70000"), HasSubstr("port \"70000\""));
  EXPECT_THAT(parse_error("127.0.0.1:"), HasSubstr("port \"\""));
  EXPECT_THAT(parse_error("127.0.0.1"), HasSubstr("missing port"));
  EXPECT_THAT(parse_error(""), HasSubstr("missing port"));
  EXPECT_THAT(parse_error("::1:9478"), HasSubstr("needs brackets"));
  EXPECT_THAT(parse_error("[::1:9478"), HasSubstr("missing \"]\""));
  EXPECT_THAT(parse_error("[::1]"), HasSubstr("missing port"));
  EXPECT_THAT(parse_error("[127.0.0.1]:80"), HasSubstr("not an IPv6 address"));
}

}  // namespace
}  // namespace hucprof
