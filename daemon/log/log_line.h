#pragma once
#include <array>
#include <chrono>
#include <optional>
#include <string>
#include <string_view>

namespace hucprof {

// How each log line on stderr looks (--log.format).
//   text   — for people: "2026-01-02T03:04:05.678 info message" (local time), or "info: message"
//            under systemd, whose journal stamps every line itself;
//   logfmt — like Prometheus exporters: ts=2026-01-02T03:04:05.678Z level=info msg="message";
//   json   — one object per line: {"ts":"2026-01-02T03:04:05.678Z","level":"info","msg":"..."}.
// logfmt and json always carry ts (UTC), so lines shipped elsewhere keep their time.
enum class LogFormat { Text, Logfmt, Json };
inline constexpr std::array<std::string_view, 3> kLogFormatNames{"text", "logfmt", "json"};

std::optional<LogFormat> parse_log_format(std::string_view name);
const char* log_format_name(LogFormat format);

struct LogLine {
  std::chrono::system_clock::time_point time;
  std::string_view level;  // "debug", "info", "warn", "error"
  std::string_view message;
};

// The line without its final newline. logfmt and json turn any message (kernel symbol names,
// file names, libbpf's multi-line verifier log) into exactly one line that parses: control
// characters are escaped and invalid UTF-8 becomes U+FFFD. text prints the message as it is.
std::string render_log_line(LogFormat format, const LogLine& line, bool under_journal);

}  // namespace hucprof
