#include "app/held_log.h"

#include <deque>
#include <mutex>

#include <spdlog/details/log_msg_buffer.h>
#include <spdlog/sinks/base_sink.h>

namespace hucprof {

class HeldLog::Sink : public spdlog::sinks::base_sink<std::mutex> {
 public:
  std::deque<spdlog::details::log_msg_buffer> take(size_t& dropped) {
    std::lock_guard lock(mutex_);
    dropped = dropped_;
    return std::move(lines_);
  }

  std::optional<std::string> latest_warning() {
    std::lock_guard lock(mutex_);
    for (auto line = lines_.rbegin(); line != lines_.rend(); ++line) {
      if (line->level >= spdlog::level::warn) {
        return std::string(line->payload.data(), line->payload.size());
      }
    }
    return std::nullopt;
  }

 protected:
  void sink_it_(const spdlog::details::log_msg& msg) override {
    if (lines_.size() == kMaxLines) {
      lines_.pop_front();
      ++dropped_;
    }
    lines_.emplace_back(msg);
  }
  void flush_() override {}

 private:
  std::deque<spdlog::details::log_msg_buffer> lines_;
  size_t dropped_ = 0;
};

HeldLog::HeldLog() : previous_(spdlog::default_logger()), sink_(std::make_shared<Sink>()) {
  auto held = std::make_shared<spdlog::logger>(previous_->name(), sink_);
  held->set_level(previous_->level());
  spdlog::set_default_logger(std::move(held));
}

HeldLog::~HeldLog() {
  spdlog::set_default_logger(previous_);
  size_t dropped = 0;
  const auto lines = sink_->take(dropped);
  if (dropped > 0) {
    previous_->warn("{} earlier log lines of the session were not kept (the last {} follow)",
                    dropped, kMaxLines);
  }
  for (const auto& line : lines) {
    previous_->log(line.time, line.source, line.level,
                   spdlog::string_view_t(line.payload.data(), line.payload.size()));
  }
}

std::optional<std::string> HeldLog::latest_warning() const { return sink_->latest_warning(); }

}  // namespace hucprof
