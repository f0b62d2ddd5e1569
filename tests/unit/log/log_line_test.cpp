#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <chrono>
#include <vector>

#include "log/log_line.h"

namespace hucprof {
namespace {

using ::testing::MatchesRegex;

// 2026-01-02T03:04:05.678Z
const std::chrono::system_clock::time_point kTime =
    std::chrono::system_clock::time_point(std::chrono::milliseconds(1767323045678));

std::string render(LogFormat format, std::string_view message, std::string_view level = "info") {
  return render_log_line(format, LogLine{kTime, level, message}, false);
}

TEST(LogLine, LogfmtLikePrometheusExporters) {
  EXPECT_EQ(render(LogFormat::Logfmt, "serving metrics on :9478"),
            R"(ts=2026-01-02T03:04:05.678Z level=info msg="serving metrics on :9478")");
  // A value without space, '=' or '"' goes unquoted, as go-logfmt writes it.
  EXPECT_EQ(render(LogFormat::Logfmt, "detaching", "warn"),
            "ts=2026-01-02T03:04:05.678Z level=warn msg=detaching");
  EXPECT_EQ(render(LogFormat::Logfmt, ""), R"(ts=2026-01-02T03:04:05.678Z level=info msg="")");
  EXPECT_EQ(render(LogFormat::Logfmt, "a=b"),
            R"(ts=2026-01-02T03:04:05.678Z level=info msg="a=b")");
}

TEST(LogLine, LogfmtEscapesQuotesBackslashesAndNewlines) {
  EXPECT_EQ(render(LogFormat::Logfmt, "key \"intervall\"\nC:\\x\tend"),
            R"(ts=2026-01-02T03:04:05.678Z level=info msg="key \"intervall\"\nC:\\x\tend")");
}

TEST(LogLine, JsonIsOneObjectPerLine) {
  EXPECT_EQ(
      render(LogFormat::Json, "probe x: \"quoted\"\nsecond line", "error"),
      R"({"ts":"2026-01-02T03:04:05.678Z","level":"error","msg":"probe x: \"quoted\"\nsecond line"})");
}

TEST(LogLine, ControlCharactersAreEscapedAsRfc8259Requires) {
  // RFC 8259 section 7: U+0000..U+001F must be escaped; \u00XX works for all of them.
  EXPECT_EQ(render(LogFormat::Json, std::string_view("a\0b\x1b[31m\x7f", 9)),
            R"({"ts":"2026-01-02T03:04:05.678Z","level":"info","msg":"a\u0000b\u001b[31m\u007f"})");
}

TEST(LogLine, ValidUtf8IsKeptInvalidBytesBecomeReplacementCharacter) {
  // "µs" stays; a lone continuation byte, an overlong '/' (C0 AF) and a UTF-16 surrogate
  // (ED A0 80) are not UTF-8 (RFC 3629) and become U+FFFD each byte.
  const std::string_view message = "10\xC2\xB5s \x80 \xC0\xAF \xED\xA0\x80";
  EXPECT_EQ(render(LogFormat::Json, message),
            "{\"ts\":\"2026-01-02T03:04:05.678Z\",\"level\":\"info\",\"msg\":\"10\xC2\xB5s "
            "\xEF\xBF\xBD \xEF\xBF\xBD\xEF\xBF\xBD \xEF\xBF\xBD\xEF\xBF\xBD\xEF\xBF\xBD\"}");
  EXPECT_EQ(render(LogFormat::Logfmt, "\xff"),
            "ts=2026-01-02T03:04:05.678Z level=info msg=\"\xEF\xBF\xBD\"");
  // A sequence cut off at the end of the message.
  EXPECT_EQ(render(LogFormat::Logfmt, "x\xE2\x82"),
            "ts=2026-01-02T03:04:05.678Z level=info msg=\"x\xEF\xBF\xBD\xEF\xBF\xBD\"");
}

TEST(LogLine, TextKeepsTheHumanFormatWithItsZone) {
  // Local time, with its offset (RFC 3339), so the line says when wherever it is read.
  EXPECT_THAT(
      render(LogFormat::Text, "hello"),
      MatchesRegex(
          R"(2026-01-0[12]T[0-9][0-9]:[0-9][0-9]:05\.678[+-][0-9][0-9]:[0-9][0-9] info hello)"));
  EXPECT_EQ(render_log_line(LogFormat::Text, LogLine{kTime, "warn", "hello"}, true), "warn: hello");
}

TEST(LogLine, FieldsAreKeysOfTheirOwnInLogfmtAndJson) {
  const std::vector<LogField> fields{{"target", "cpu-clock"},
                                     {"reason", "perf_event_open failed: EACCES: \"denied\""},
                                     {"errno", "EACCES"}};
  const LogLine line{kTime, "warn", "sampler: unavailable", fields};
  EXPECT_EQ(render_log_line(LogFormat::Logfmt, line, false),
            R"(ts=2026-01-02T03:04:05.678Z level=warn msg="sampler: unavailable" target=cpu-clock )"
            R"(reason="perf_event_open failed: EACCES: \"denied\"" errno=EACCES)");
  EXPECT_EQ(render_log_line(LogFormat::Json, line, false),
            R"({"ts":"2026-01-02T03:04:05.678Z","level":"warn","msg":"sampler: unavailable",)"
            R"("target":"cpu-clock","reason":"perf_event_open failed: EACCES: \"denied\"",)"
            R"("errno":"EACCES"})");
  // Text is for people: the message already says it.
  EXPECT_EQ(render_log_line(LogFormat::Text, line, true), "warn: sampler: unavailable");
}

TEST(LogLine, FormatNames) {
  for (const auto name : kLogFormatNames) {
    const auto format = parse_log_format(name);
    ASSERT_TRUE(format.has_value()) << name;
    EXPECT_EQ(log_format_name(*format), name);
  }
  EXPECT_FALSE(parse_log_format("JSON").has_value());
  EXPECT_FALSE(parse_log_format("").has_value());
}

}  // namespace
}  // namespace hucprof
