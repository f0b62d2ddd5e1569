#include "log/logging.h"

#include <cstdlib>
#include <memory>
#include <string>

#include <spdlog/pattern_formatter.h>
#include <spdlog/sinks/stdout_sinks.h>
#include <spdlog/spdlog.h>

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

class LineFormatter : public spdlog::formatter {
 public:
  LineFormatter(LogFormat format, bool under_journal)
      : format_(format), under_journal_(under_journal) {}

  void format(const spdlog::details::log_msg& msg, spdlog::memory_buf_t& dest) override {
    const LogLine line{msg.time, level_name(msg.level),
                       std::string_view(msg.payload.data(), msg.payload.size())};
    const std::string text = render_log_line(format_, line, under_journal_);
    dest.append(text.data(), text.data() + text.size());
    dest.push_back('\n');
  }

  std::unique_ptr<spdlog::formatter> clone() const override {
    return std::make_unique<LineFormatter>(format_, under_journal_);
  }

 private:
  LogFormat format_;
  bool under_journal_;
};

std::shared_ptr<spdlog::logger> stderr_logger() {
  static const auto logger = [] {
    auto made = std::make_shared<spdlog::logger>("hucprof",
                                                 std::make_shared<spdlog::sinks::stderr_sink_mt>());
    spdlog::set_default_logger(made);
    return made;
  }();
  return logger;
}

}  // namespace

void configure_logging(LogFormat format, std::string_view level) {
  // systemd sets JOURNAL_STREAM when stderr goes to the journal, which stamps lines itself.
  const bool under_journal = std::getenv("JOURNAL_STREAM") != nullptr;
  auto logger = stderr_logger();
  logger->set_formatter(std::make_unique<LineFormatter>(format, under_journal));
  logger->set_level(spdlog::level::from_str(std::string(level)));
}

}  // namespace hucprof
