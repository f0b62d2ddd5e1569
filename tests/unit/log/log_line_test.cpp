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

TEST(LogLine, LogfmtEscapesQuotesAndBackslashes) {
  // The line break and tab are first written \n and \t as text (every format carries the same
  // one-line message), whose backslashes logfmt then escapes.
  EXPECT_EQ(render(LogFormat::Logfmt, "key \"intervall\"\nC:\\x\tend"),
            R"(ts=2026-01-02T03:04:05.678Z level=info msg="key \"intervall\"\\nC:\\x\\tend")");
}

TEST(LogLine, JsonIsOneObjectPerLine) {
  EXPECT_EQ(
      render(LogFormat::Json, "probe x: \"quoted\"\nsecond line", "error"),
      R"({"ts":"2026-01-02T03:04:05.678Z","level":"error","msg":"probe x: \"quoted\"\\nsecond line"})");
}

// D11 of issue 37: a path, a command or a debuginfo file name holding control bytes was written
// raw (a terminal acted on ESC ] 0 ; ... BEL; a journal reader got a NUL). Whatever the call site,
// the message reads \xNN in every format: JSON and logfmt decode to that text.
TEST(LogLine, ControlBytesReadXnnInEveryFormat) {
  static constexpr char kRaw[] = "cannot read /tmp/a\0b\x1b]0;owned\x07\x7f\xc2\x9b";
  const std::string_view message(kRaw, sizeof kRaw - 1);
  const std::string shown = R"(cannot read /tmp/a\x00b\x1b]0;owned\x07\x7f\xc2\x9b)";
  EXPECT_EQ(render_log_line(LogFormat::Text, LogLine{kTime, "error", message}, true),
            "error: " + shown);
  std::string doubled;  // as JSON and logfmt quote a backslash
  for (char c : shown) doubled += c == '\\' ? std::string("\\\\") : std::string(1, c);
  EXPECT_EQ(render(LogFormat::Json, message),
            R"({"ts":"2026-01-02T03:04:05.678Z","level":"info","msg":")" + doubled + "\"}");
  EXPECT_EQ(render(LogFormat::Logfmt, message),
            R"(ts=2026-01-02T03:04:05.678Z level=info msg=")" + doubled + "\"");
}

TEST(LogLine, ValidUtf8IsKeptInvalidBytesReadXnn) {
  // "µs" stays; a lone continuation byte, an overlong '/' (C0 AF) and a UTF-16 surrogate
  // (ED A0 80) are not UTF-8 (RFC 3629): each byte reads \xNN.
  const std::string_view message = "10\xC2\xB5s \x80 \xC0\xAF \xED\xA0\x80";
  EXPECT_EQ(render(LogFormat::Json, message),
            "{\"ts\":\"2026-01-02T03:04:05.678Z\",\"level\":\"info\",\"msg\":\"10\xC2\xB5s "
            R"(\\x80 \\xc0\\xaf \\xed\\xa0\\x80"})");
  EXPECT_EQ(render(LogFormat::Logfmt, "\xff"),
            R"(ts=2026-01-02T03:04:05.678Z level=info msg=\xff)");
  // A sequence cut off at the end of the message. Without a space, '=' or '"', logfmt leaves a
  // value unquoted, and go-logfmt reads its backslashes as they are.
  EXPECT_EQ(render(LogFormat::Logfmt, "x\xE2\x82"),
            R"(ts=2026-01-02T03:04:05.678Z level=info msg=x\xe2\x82)");
}

TEST(LogLine, FieldValuesAreMadePrintableToo) {
  const std::vector<LogField> fields{{"target", "/sys/fs/cgroup/pod\x1b[2J\n"}};
  const LogLine line{kTime, "warn", "cgroup: unreadable", fields};
  EXPECT_EQ(render_log_line(LogFormat::Logfmt, line, false),
            R"(ts=2026-01-02T03:04:05.678Z level=warn msg="cgroup: unreadable" )"
            R"(target=/sys/fs/cgroup/pod\x1b[2J\n)");
  EXPECT_EQ(render_log_line(LogFormat::Json, line, false),
            R"({"ts":"2026-01-02T03:04:05.678Z","level":"warn","msg":"cgroup: unreadable",)"
            R"("target":"/sys/fs/cgroup/pod\\x1b[2J\\n"})");
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
