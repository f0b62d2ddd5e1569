#include "log/log_line.h"

#include <array>
#include <cstdint>
#include <cstdio>
#include <ctime>

#include "core/base/message_text.h"
#include "core/base/utf8.h"

namespace hucprof {
namespace {

constexpr std::string_view kReplacement = "\xEF\xBF\xBD";  // U+FFFD in UTF-8

// Appends `text` with JSON string escaping (also what logfmt's quoted values use): quote,
// backslash and control characters escaped, invalid UTF-8 replaced.
void append_escaped(std::string& out, std::string_view text) {
  while (!text.empty()) {
    const unsigned char c = static_cast<unsigned char>(text.front());
    const size_t length = utf8_sequence_length(text);
    if (length == 0) {
      out += kReplacement;
      text.remove_prefix(1);
      continue;
    }
    if (length > 1) {
      out.append(text.substr(0, length));
    } else if (c == '"' || c == '\\') {
      out += '\\';
      out += static_cast<char>(c);
    } else if (c == '\n') {
      out += "\\n";
    } else if (c == '\r') {
      out += "\\r";
    } else if (c == '\t') {
      out += "\\t";
    } else if (c < 0x20 || c == 0x7F) {
      std::array<char, 8> buffer{};
      std::snprintf(buffer.data(), buffer.size(), "\\u%04x", c);
      out += buffer.data();
    } else {
      out += static_cast<char>(c);
    }
    text.remove_prefix(length);
  }
}

// go-logfmt's rule: a value needs quotes when it is empty or holds a space, '=', '"', a
// control character or anything that is not valid UTF-8.
bool logfmt_needs_quotes(std::string_view value) {
  if (value.empty()) return true;
  while (!value.empty()) {
    const unsigned char c = static_cast<unsigned char>(value.front());
    const size_t length = utf8_sequence_length(value);
    if (length == 0 || c <= ' ' || c == '=' || c == '"' || c == 0x7F) return true;
    value.remove_prefix(length);
  }
  return false;
}

void append_logfmt_value(std::string& out, std::string_view value) {
  if (!logfmt_needs_quotes(value)) {
    out += value;
    return;
  }
  out += '"';
  append_escaped(out, value);
  out += '"';
}

// RFC 3339: "2026-01-02T03:04:05.678Z" in UTC, or local time with its offset
// ("2026-01-02T04:04:05.678+01:00"), so a line read on another machine still says when.
std::string timestamp(std::chrono::system_clock::time_point time, bool utc) {
  const auto since_epoch = time.time_since_epoch();
  const auto seconds = std::chrono::floor<std::chrono::seconds>(since_epoch);
  const auto millis = std::chrono::duration_cast<std::chrono::milliseconds>(since_epoch - seconds);
  const std::time_t t = static_cast<std::time_t>(seconds.count());
  std::tm parts{};
  if (utc) {
    gmtime_r(&t, &parts);
  } else {
    localtime_r(&t, &parts);
  }
  std::array<char, 40> buffer{};
  const size_t n = std::strftime(buffer.data(), buffer.size(), "%Y-%m-%dT%H:%M:%S", &parts);
  std::array<char, 8> fraction{};
  std::snprintf(fraction.data(), fraction.size(), ".%03d", static_cast<int>(millis.count()));
  std::string out = std::string(buffer.data(), n) + fraction.data();
  if (utc) return out + "Z";
  std::array<char, 8> zone{};  // "+0100": RFC 3339 wants "+01:00"
  if (std::strftime(zone.data(), zone.size(), "%z", &parts) == 5) {
    return out + std::string(zone.data(), 3) + ":" + std::string(zone.data() + 3, 2);
  }
  return out;
}

}  // namespace

std::optional<LogFormat> parse_log_format(std::string_view name) {
  for (size_t i = 0; i < kLogFormatNames.size(); ++i) {
    if (kLogFormatNames[i] == name) return static_cast<LogFormat>(i);
  }
  return std::nullopt;
}

const char* log_format_name(LogFormat format) {
  return kLogFormatNames[static_cast<size_t>(format)].data();
}

std::string render_log_line(LogFormat format, const LogLine& line, bool under_journal) {
  // Whatever a message quotes (a path, a command, a symbol, a debuginfo file name, libbpf's
  // words), it is made one printable line here, the one place every line passes: no call site
  // can forget, and every format carries the same text.
  const std::string message = on_one_line(line.message);
  std::string out;
  switch (format) {
    case LogFormat::Text:
      if (under_journal) {
        out.append(line.level).append(": ");
      } else {
        out.append(timestamp(line.time, false)).append(" ").append(line.level).append(" ");
      }
      out.append(message);
      break;
    case LogFormat::Logfmt:
      out.append("ts=").append(timestamp(line.time, true));
      out.append(" level=");
      append_logfmt_value(out, line.level);
      out.append(" msg=");
      append_logfmt_value(out, message);
      for (const LogField& field : line.fields) {
        out.append(" ").append(field.key).append("=");
        append_logfmt_value(out, on_one_line(field.value));
      }
      break;
    case LogFormat::Json:
      out.append("{\"ts\":\"").append(timestamp(line.time, true)).append("\",\"level\":\"");
      append_escaped(out, line.level);
      out.append("\",\"msg\":\"");
      append_escaped(out, message);
      for (const LogField& field : line.fields) {
        out.append("\",\"");
        append_escaped(out, field.key);
        out.append("\":\"");
        append_escaped(out, on_one_line(field.value));
      }
      out.append("\"}");
      break;
  }
  return out;
}

}  // namespace hucprof
