#pragma once
#include <memory>
#include <optional>
#include <string>

#include <spdlog/spdlog.h>

namespace hucprof {

// While a full-screen view is up, a log line on stderr (the same terminal) would tear it: the
// lines wait in memory instead (the last kMaxLines; earlier ones are counted) and go to the log
// as configured, with their times, once the view ends. The latest warning or error can be shown
// on the screen meanwhile.
class HeldLog {
 public:
  static constexpr size_t kMaxLines = 200;

  HeldLog();
  ~HeldLog();  // the held lines, in order, to the logger that was in place
  HeldLog(const HeldLog&) = delete;
  HeldLog& operator=(const HeldLog&) = delete;

  std::optional<std::string> latest_warning() const;

  class Sink;

 private:
  std::shared_ptr<spdlog::logger> previous_;
  std::shared_ptr<Sink> sink_;
};

}  // namespace hucprof
