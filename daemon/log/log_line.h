#pragma once
#include <array>
#include <chrono>
#include <optional>
#include <span>
#include <string>
#include <string_view>

namespace hucprof {

// How each log line on stderr looks (--log.format).
//   text   — for people: "2026-01-02T04:04:05.678+01:00 info message" (local time with its
//            offset), or "info: message" under systemd, whose journal stamps every line itself;
//   logfmt — like Prometheus exporters: ts=2026-01-02T03:04:05.678Z level=info msg="message",
//            then the line's structured fields (target=… reason=… errno=…);
//   json   — one object per line: {"ts":"2026-01-02T03:04:05.678Z","level":"info","msg":"..."},
//            the fields as more members.
// logfmt and json always carry ts (UTC), so lines shipped elsewhere keep their time.
enum class LogFormat { Text, Logfmt, Json };
inline constexpr std::array<std::string_view, 3> kLogFormatNames{"text", "logfmt", "json"};

std::optional<LogFormat> parse_log_format(std::string_view name);
const char* log_format_name(LogFormat format);

// A structured key of a log line (target, reason, errno): what a log pipeline selects on without
// parsing the message. Keys are lower-case logfmt keys; the journal gets them upper-cased.
struct LogField {
  std::string key;
  std::string value;
};

struct LogLine {
  std::chrono::system_clock::time_point time;
  std::string_view level;  // "debug", "info", "warn", "error"
  std::string_view message;
  std::span<const LogField> fields = {};
};

// The line without its final newline. Every format turns any message and field (kernel symbol
// names, paths, commands, cgroup names, whatever bytes they hold) into exactly one printable
// line (core/base/message_text.h's on_one_line): a line break or tab reads \n, \t, \r, any other
// control character and any byte that is not UTF-8 \xNN; logfmt and json then quote that text
// as their syntax wants, so the line parses and decodes to the same text the text format shows.
std::string render_log_line(LogFormat format, const LogLine& line, bool under_journal);

}  // namespace hucprof
