#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "core/text/duration.h"

namespace hucprof {
namespace {

using std::chrono::milliseconds;
using ::testing::HasSubstr;

TEST(ParseDuration, AcceptsGoAndPrometheusSpellings) {
  const struct {
    const char* text;
    int64_t ms;
  } cases[] = {
      {"10s", 10'000},
      {"500ms", 500},
      {"1m", 60'000},
      {"1m30s", 90'000},
      {"1h", 3'600'000},
      {"2h45m", 9'900'000},
      {"1.5s", 1'500},
      {"0.25m", 15'000},
      {".5s", 500},
      {"100ms", 100},
      {"0", 0},
      {"0s", 0},
      {"30s500ms", 30'500},
      {"1500000us", 1'500},
      {"2000000000ns", 2'000},
      {"1s1m", 61'000},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.text);
    const auto parsed = parse_duration(c.text);
    ASSERT_TRUE(parsed.ok()) << parsed.error().text;
    EXPECT_EQ(parsed.value().count(), c.ms);
  }
  // µs (micro sign) as Go spells it.
  const auto micro = parse_duration("2000\xC2\xB5s");
  ASSERT_TRUE(micro.ok());
  EXPECT_EQ(micro.value().count(), 2);
}

TEST(ParseDuration, RefusesWithAReason) {
  const struct {
    const char* text;
    const char* reason;
  } cases[] = {
      {"10", "\"10\" has no unit"},
      {"", "\"\" is not a duration"},
      {"s", "\"s\" is not a duration"},
      {"10x", "\"10x\" is not a duration (e.g. 10s, 500ms, 1m30s)"},
      {"-5s", "\"-5s\" is not a duration"},
      {"1d", "\"1d\" is not a duration"},
      {"10 s", "\"10 s\" is not a duration"},
      {"1.0005s", "\"1.0005s\" is finer than a millisecond"},
      {"1500us", "finer than a millisecond"},
      {"99999999999999h", "is too long"},
      {"99999999999999999999999s", "is too long"},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.text);
    const auto parsed = parse_duration(c.text);
    ASSERT_FALSE(parsed.ok());
    EXPECT_THAT(parsed.error().text, HasSubstr(c.reason));
  }
}

TEST(FormatDuration, WritesWhatParseReads) {
  EXPECT_EQ(format_duration(milliseconds(10'000)), "10s");
  EXPECT_EQ(format_duration(milliseconds(100)), "100ms");
  EXPECT_EQ(format_duration(milliseconds(90'000)), "1m30s");
  EXPECT_EQ(format_duration(milliseconds(3'661'001)), "1h1m1s1ms");
  EXPECT_EQ(format_duration(milliseconds(0)), "0s");
  for (int64_t ms : {1, 999, 1000, 61'500, 7'200'000}) {
    EXPECT_EQ(parse_duration(format_duration(milliseconds(ms))).value().count(), ms);
  }
}

}  // namespace
}  // namespace hucprof
