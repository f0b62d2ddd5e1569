#include "log/logging.h"

#include <sys/stat.h>
#include <sys/uio.h>
#include <systemd/sd-journal.h>
#include <unistd.h>

#include <cctype>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include <spdlog/sinks/base_sink.h>
#include <spdlog/spdlog.h>

#include "core/base/message_text.h"
#include "log/log_fields.h"

namespace hucprof {
namespace {

// The level names of --log.level, which are also what logfmt/json consumers expect.
std::string_view level_name(spdlog::level::level_enum level) {
  switch (level) {
    case spdlog::level::trace:
    case spdlog::level::debug:
      return "debug";
    case spdlog::level::info:
      return "info";
    case spdlog::level::warn:
      return "warn";
    default:
      return "error";
  }
}

// syslog(3) priorities, which journald keeps as PRIORITY= (`journalctl -p warning`).
int syslog_priority(spdlog::level::level_enum level) {
  switch (level) {
    case spdlog::level::trace:
    case spdlog::level::debug:
      return 7;
    case spdlog::level::info:
      return 6;
    case spdlog::level::warn:
      return 4;
    case spdlog::level::err:
      return 3;
    default:
      return 2;
  }
}

// systemd sets JOURNAL_STREAM=DEV:INODE when it connects stderr to the journal; stderr is still
// that stream only if the numbers match (sd_journal_stream_fd(3)), not when a shell started from
// the unit redirected it.
bool stderr_is_journal() {
  const char* stream = std::getenv("JOURNAL_STREAM");
  if (stream == nullptr) return false;
  unsigned long long dev = 0, ino = 0;
  if (std::sscanf(stream, "%llu:%llu", &dev, &ino) != 2) return false;
  struct stat st {};
  return fstat(STDERR_FILENO, &st) == 0 && static_cast<unsigned long long>(st.st_dev) == dev &&
         static_cast<unsigned long long>(st.st_ino) == ino;
}

std::string journal_field_name(std::string_view key) {
  std::string name;
  for (const char c : key) {
    name += std::isalnum(static_cast<unsigned char>(c))
                ? static_cast<char>(std::toupper(static_cast<unsigned char>(c)))
                : '_';
  }
  return name;
}

// One entry over journald's native protocol: the line as MESSAGE, its level as PRIORITY and the
// structured fields as fields of their own (ERRNO= holds the number, as systemd.journal-fields(7)
// defines it). False when journald cannot be reached.
bool send_to_journal(std::string_view line, int priority, std::span<const LogField> fields) {
  std::vector<std::string> items;
  items.reserve(3 + fields.size());
  items.push_back("MESSAGE=" + std::string(line));
  items.push_back("PRIORITY=" + std::to_string(priority));
  items.emplace_back("SYSLOG_IDENTIFIER=hucprof");
  for (const LogField& field : fields) {
    std::string value = field.value;
    if (field.key == "errno") {
      if (auto number = errno_number(value)) value = std::to_string(*number);
    }
    items.push_back(journal_field_name(field.key) + "=" + on_one_line(value));
  }
  std::vector<iovec> iov;
  iov.reserve(items.size());
  for (std::string& item : items) iov.push_back({item.data(), item.size()});
  return sd_journal_sendv(iov.data(), static_cast<int>(iov.size())) >= 0;
}

// Renders every line in the chosen format and writes it to stderr, or, when stderr is the
// journal, sends it to journald natively so that each line keeps its level and fields. If
// journald refuses, the line goes to stderr with the sd-daemon prefix ("<4>"), which journald
// turns into the same priority.
class LineSink : public spdlog::sinks::base_sink<std::mutex> {
 public:
  void configure(LogFormat format, bool journal) {
    std::lock_guard lock(mutex_);
    format_ = format;
    journal_ = journal;
  }

 protected:
  void sink_it_(const spdlog::details::log_msg& msg) override {
    const LogLine line{msg.time, level_name(msg.level),
                       std::string_view(msg.payload.data(), msg.payload.size()),
                       current_log_fields()};
    std::string text = render_log_line(format_, line, journal_);
    const int priority = syslog_priority(msg.level);
    if (journal_ && send_to_journal(text, priority, line.fields)) return;
    if (journal_) text = "<" + std::to_string(priority) + ">" + text;
    text += '\n';
    std::fwrite(text.data(), 1, text.size(), stderr);
  }
  void flush_() override { std::fflush(stderr); }

 private:
  LogFormat format_ = LogFormat::Text;
  bool journal_ = false;
};

std::shared_ptr<LineSink> line_sink() {
  static const auto sink = [] {
    auto made = std::make_shared<LineSink>();
    spdlog::set_default_logger(std::make_shared<spdlog::logger>("hucprof", made));
    return made;
  }();
  return sink;
}

}  // namespace

void print_stderr_line(std::string_view line) {
  const std::string text = on_one_line(line) + "\n";
  std::fwrite(text.data(), 1, text.size(), stderr);
}

void configure_logging(LogFormat format, std::string_view level) {
  auto sink = line_sink();
  sink->configure(format, stderr_is_journal());
  spdlog::default_logger()->set_level(spdlog::level::from_str(std::string(level)));
}

}  // namespace hucprof
