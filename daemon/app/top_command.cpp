#include "app/top_command.h"

#include <signal.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <functional>
#include <memory>
#include <optional>
#include <string>

#include <spdlog/spdlog.h>

#include "app/build_info.h"
#include "app/command_error.h"
#include "app/held_log.h"
#include "app/kernel_view.h"
#include "app/profiling_pipeline.h"
#include "app/top_terminal.h"
#include "core/base/message_text.h"
#include "core/drain/metrics_snapshot.h"
#include "core/files/file_text.h"
#include "core/profile/top_model.h"
#include "core/text/duration.h"
#include "export/views/top_table.h"
#include "web/metrics_fetch.h"

namespace hucprof {
namespace {

using Clock = std::chrono::steady_clock;
constexpr size_t kMaxCaFileBytes = size_t{1} << 20;
constexpr const char* kPasswordVariable = "HUCPROF_FROM_PASSWORD";
// The ranking is top's own: every call site by name, none folded into "other" by the
// aggregator's top-K (the largest --top-k there is).
constexpr uint32_t kOwnTopK = 1000;

double seconds_since(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

std::string utc_now() {
  const std::time_t now = std::time(nullptr);
  std::tm tm{};
  gmtime_r(&now, &tm);
  char text[32];
  std::strftime(text, sizeof(text), "%Y-%m-%d %H:%M:%S UTC", &tm);
  return text;
}

// Where the cumulative counters come from, one reading at a time.
class Readings {
 public:
  virtual ~Readings() = default;
  // keep_going: asked while a reading takes time; false abandons it.
  virtual Result<hucprof::v1::Snapshot> read(const std::function<bool()>& keep_going) = 0;
  virtual std::string name() const = 0;
};

class DaemonReadings : public Readings {
 public:
  static Result<std::unique_ptr<Readings>> make(const TopOptions& top) {
    auto url = parse_metrics_url(*top.from);
    if (!url.ok()) return Error{"--from: " + url.error().text};
    auto readings = std::make_unique<DaemonReadings>();
    readings->url_ = std::move(url).value();
    readings->options_.user_agent = std::string("hucprof/") + hucprof_version();
    if (!top.from_ca_file.empty()) {
      auto pem = read_regular_file(top.from_ca_file, kMaxCaFileBytes);
      if (!pem.ok()) return cannot_read(top.from_ca_file, "--from.ca-file", pem.error());
      readings->options_.ca_pem = std::move(pem).value();
    }
    if (!readings->url_.user.empty()) {
      const char* password = std::getenv(kPasswordVariable);
      if (password == nullptr) {
        return Error{"--from: a user is given, and the password is read from " +
                     std::string(kPasswordVariable) + ", which is not set"};
      }
      readings->options_.password = password;
    }
    return std::unique_ptr<Readings>(std::move(readings));
  }

  Result<hucprof::v1::Snapshot> read(const std::function<bool()>& keep_going) override {
    auto body = fetch_metrics(url_, options_, keep_going);
    if (!body.ok()) return body.error();
    auto snapshot = snapshot_from_metrics(body.value());
    if (!snapshot.ok()) return Error{url_.text() + ": " + snapshot.error().text};
    return snapshot;
  }

  std::string name() const override { return url_.text(); }

 private:
  MetricsUrl url_;
  FetchOptions options_;
};

// top's own programs, as `hucprof record` loads them, drained at every reading.
class OwnReadings : public Readings {
 public:
  static Result<std::unique_ptr<Readings>> start(RunOptions options, const TopOptions& top) {
    options.interval = top.delay;
    options.top_k = kOwnTopK;
    auto readings = std::make_unique<OwnReadings>();
    auto loaded = load_kernel_view(options.kallsyms_path);
    if (!loaded.ok()) return loaded.error();
    readings->kernel_ = std::make_unique<KernelView>(std::move(loaded).value());
    auto started = ProfilingPipeline::start(options, *readings->kernel_);
    if (!started.ok()) return started.error();
    readings->pipeline_ = std::move(started).value();
    readings->name_ = "this node:";
    if (readings->pipeline_->sampling_on()) {
      readings->name_ += " sampling at " + std::to_string(options.sample_frequency) + " Hz";
    }
    if (readings->pipeline_->probes_on()) {
      readings->name_ += readings->pipeline_->sampling_on() ? ", probes" : " probes";
    }
    return std::unique_ptr<Readings>(std::move(readings));
  }

  Result<hucprof::v1::Snapshot> read(const std::function<bool()>&) override {
    pipeline_->drain(true);
    return pipeline_->latest();
  }

  std::string name() const override { return name_; }

 private:
  std::unique_ptr<KernelView> kernel_;  // the pipeline's symbolizer reads it
  std::unique_ptr<ProfilingPipeline> pipeline_;
  std::string name_;
};

// The readings and the model, and what a session shows of them; the screen and the tables
// differ only in how a frame is shown and which events come.
class Session {
 public:
  Session(Readings& readings, const TopOptions& top, TopEvents& events, bool terminal)
      : readings_(readings), top_(top), events_(events), model_(!top.from) {
    frame_.source = readings.name();
    frame_.delay_seconds = std::chrono::duration<double>(top.delay).count();
    frame_.terminal = terminal;
    cumulative_ = top.cumulative;
  }

  // One reading into the model: what it was, or nullopt when it failed (the status says why;
  // the next refresh tries again) or a quit came meanwhile. The first reading's failure is the
  // session's: nothing was ever shown.
  Result<std::optional<TopModel::Observed>> read() {
    auto reading = readings_.read([this] { return handle_pending(); });
    if (quit_) return std::nullopt;
    if (!reading.ok()) {
      if (!read_once_) return reading.error();
      frame_.status =
          reading.error().text + " (trying again every " + format_duration(top_.delay) + ")";
      return std::nullopt;
    }
    read_once_ = true;
    const auto observed = model_.observe(seconds_since(start_), reading.value());
    frame_.time = utc_now();
    frame_.status.clear();
    if (observed == TopModel::Observed::WentBack) {
      frame_.status = "the counters went back at " + frame_.time +
                      " (the daemon restarted?): counting again from there";
    }
    update_view();
    return observed;
  }

  // Waits until `until`, answering events meanwhile; false once one says quit.
  bool wait(Clock::time_point until) {
    while (!quit_) {
      const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(until - Clock::now());
      if (left.count() <= 0) break;
      if (const auto event = events_.wait_for(left)) handle(*event);
    }
    return !quit_;
  }

  bool quit() const { return quit_; }
  TopFrame& frame() { return frame_; }
  std::function<void()> on_redraw;
  std::function<void()> on_suspend;

 private:
  void update_view() { frame_.view = model_.view(cumulative_); }

  // Events that came while a reading took its time; false once one says quit.
  bool handle_pending() {
    while (!quit_) {
      const auto event = events_.wait_for(std::chrono::milliseconds(0));
      if (!event) break;
      handle(*event);
    }
    return !quit_;
  }

  void handle(TopEvent event) {
    switch (event) {
      case TopEvent::Quit:
        quit_ = true;
        return;
      case TopEvent::Toggle:
        cumulative_ = !cumulative_;
        update_view();
        break;
      case TopEvent::Suspend:
        if (on_suspend) on_suspend();
        break;
      case TopEvent::Redraw:
        break;
    }
    if (on_redraw) on_redraw();
  }

  Readings& readings_;
  const TopOptions& top_;
  TopEvents& events_;
  TopModel model_;
  TopFrame frame_;
  const Clock::time_point start_ = Clock::now();
  bool cumulative_ = false;
  bool read_once_ = false;
  bool quit_ = false;
};

// The next refresh: a reading that took longer than the delay is not made up for in a burst.
Clock::time_point next_refresh(Clock::time_point planned, std::chrono::milliseconds delay) {
  const auto next = planned + delay;
  return next < Clock::now() ? Clock::now() + delay : next;
}

Result<void> on_screen(Readings& readings, const TopOptions& top, TopEvents& events) {
  HeldLog held;  // replays its lines after the terminal is back (destroyed after it)
  TopTerminal terminal;
  Session session(readings, top, events, true);
  const auto draw = [&] {
    TopFrame& frame = session.frame();
    const std::string status = frame.status;
    if (frame.status.empty()) {
      if (auto warning = held.latest_warning()) frame.status = "log: " + *warning;
    }
    const TopTerminal::Size size = terminal.size();
    terminal.draw(top_screen(frame, size.width, size.height), size.width);
    frame.status = status;
  };
  session.on_redraw = draw;
  session.on_suspend = [&] {
    terminal.leave();
    kill(getpid(), SIGSTOP);  // SIGTSTP is ours to answer; the shell sees the stop all the same
    terminal.enter();
  };
  draw();
  uint64_t refreshes = 0;
  auto planned = Clock::now();
  while (!session.quit()) {
    const auto observed = session.read();
    if (!observed.ok()) return observed.error();
    if (session.quit()) break;
    if (observed.value() == TopModel::Observed::Counted) ++refreshes;
    draw();
    if (top.iterations && refreshes >= *top.iterations) break;
    planned = next_refresh(planned, top.delay);
    if (!session.wait(planned)) break;
  }
  return {};
}

// One table per refresh on a pipe or a file: a write that fails ends the session, quietly when
// the reader went away (`| head`).
Result<void> as_tables(Readings& readings, const TopOptions& top, TopEvents& events) {
  Session session(readings, top, events, false);
  uint64_t tables = 0;
  auto planned = Clock::now();
  while (!session.quit()) {
    const auto observed = session.read();
    if (!observed.ok()) return observed.error();
    if (session.quit()) break;
    if (!observed.value() || *observed.value() == TopModel::Observed::WentBack) {
      spdlog::warn("{}", session.frame().status);
    } else if (*observed.value() == TopModel::Observed::Counted) {
      session.frame().status.clear();
      const std::string table = top_table(session.frame());
      if (std::fwrite(table.data(), 1, table.size(), stdout) != table.size() ||
          std::fflush(stdout) != 0) {
        if (errno == EPIPE) return {};
        return Error{
            on_one_line("cannot write the table: " + lowercase_first(std::strerror(errno))),
            kExitCannotRun};
      }
      if (top.iterations && ++tables >= *top.iterations) break;
    }
    planned = next_refresh(planned, top.delay);
    if (!session.wait(planned)) break;
  }
  return {};
}

}  // namespace

int top_command(const RunOptions& run, const TopOptions& top) {
  const bool screen = TopTerminal::available();
  // Before the pipeline starts its threads: they inherit the blocked signals.
  TopEvents events(screen && TopTerminal::keys_available(), screen);
  auto readings = top.from ? DaemonReadings::make(top) : OwnReadings::start(run, top);
  if (!readings.ok()) return log_and_exit_code(readings.error());
  const Result<void> session = screen ? on_screen(*readings.value(), top, events)
                                      : as_tables(*readings.value(), top, events);
  if (!session.ok()) return log_and_exit_code(session.error());
  return 0;
}

}  // namespace hucprof
