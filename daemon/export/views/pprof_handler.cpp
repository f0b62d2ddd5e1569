#include "export/views/pprof_handler.h"

#include <algorithm>
#include <charconv>
#include <list>
#include <mutex>
#include <thread>
#include <utility>

#include "core/base/quoted_value.h"
#include "core/profile/shown_windows.h"
#include "export/views/pprof_writer.h"

namespace hucprof {

namespace {

HttpResponse text(int status, std::string body) {
  HttpResponse r;
  r.status = status;
  r.body = std::move(body) + "\n";
  return r;
}

HttpResponse profile_response(const StackProfile& profile, const std::function<void()>& pause) {
  HttpResponse r;
  r.content_type = "application/octet-stream";
  r.body = encode_pprof_gzip(profile, pause);
  r.headers = {{"Content-Disposition", "attachment; filename=\"usercopy.pb.gz\""},
               {"X-Content-Type-Options", "nosniff"},
               {"Cache-Control", "no-store"}};
  return r;
}

// The ?seconds= windows open at once: who holds each and when it ends.
class Windows {
 public:
  using Clock = std::chrono::steady_clock;
  struct Open {
    std::string peer;
    Clock::time_point ends;
  };

  explicit Windows(size_t max) : max_(max) {}

  // A window for `peer` until `ends`, or the 429 saying why not and when to retry.
  std::optional<HttpResponse> take(const std::string& peer, Clock::time_point ends,
                                   std::list<Open>::iterator* taken) {
    std::lock_guard lock(mutex_);
    const auto now = Clock::now();
    auto mine =
        std::find_if(open_.begin(), open_.end(), [&](const Open& w) { return w.peer == peer; });
    if (mine != open_.end()) {
      return too_many("a profile window of this client is open already (one per client)",
                      mine->ends - now);
    }
    if (open_.size() >= max_) {
      auto soonest = std::min_element(open_.begin(), open_.end(),
                                      [](const Open& a, const Open& b) { return a.ends < b.ends; });
      return too_many("too many profile requests waiting (at most " + std::to_string(max_) + ")",
                      soonest->ends - now);
    }
    *taken = open_.insert(open_.end(), Open{peer, ends});
    return std::nullopt;
  }

  void give_back(std::list<Open>::iterator window) {
    std::lock_guard lock(mutex_);
    open_.erase(window);
  }

 private:
  static HttpResponse too_many(const std::string& why, Clock::duration left) {
    const auto seconds =
        std::max<int64_t>(1, std::chrono::ceil<std::chrono::seconds>(left).count());
    HttpResponse r = text(429, why + "; try again in " + std::to_string(seconds) + " s");
    r.headers.emplace_back("Retry-After", std::to_string(seconds));
    return r;
  }

  std::mutex mutex_;
  size_t max_;
  std::list<Open> open_;
};

// Holds a window for as long as it lives.
class WindowSlot {
 public:
  WindowSlot(Windows& windows, std::list<Windows::Open>::iterator window)
      : windows_(windows), window_(window) {}
  ~WindowSlot() { windows_.give_back(window_); }
  WindowSlot(const WindowSlot&) = delete;
  WindowSlot& operator=(const WindowSlot&) = delete;

 private:
  Windows& windows_;
  std::list<Windows::Open>::iterator window_;
};

}  // namespace

Result<std::optional<int>> profile_seconds(const std::multimap<std::string, std::string>& query,
                                           int max_seconds) {
  const auto given = query.equal_range("seconds");
  if (given.first == given.second) return std::nullopt;
  if (std::next(given.first) != given.second) return Error{"seconds: given twice"};
  const std::string& value = given.first->second;
  int seconds = 0;
  const auto [end, ec] = std::from_chars(value.data(), value.data() + value.size(), seconds);
  if (ec != std::errc{} || end != value.data() + value.size() || seconds < 1 ||
      seconds > max_seconds) {
    return Error{"seconds: " + quoted_value(value) +
                 " is not a whole number of seconds from 1 to " + std::to_string(max_seconds)};
  }
  return seconds;
}

Result<std::optional<WindowRequest>> profile_window(
    const std::multimap<std::string, std::string>& query) {
  const auto given = query.equal_range("window");
  const auto end = query.equal_range("end");
  if (given.first == given.second) {
    if (end.first != end.second) return Error{"end: only with window=prediction"};
    return std::nullopt;
  }
  if (std::next(given.first) != given.second) return Error{"window: given twice"};
  if (given.first->second != "prediction") {
    return Error{"window: " + quoted_value(given.first->second) + " is not \"prediction\""};
  }
  if (query.contains("seconds")) return Error{"window and seconds: give one of them"};
  WindowRequest out;
  if (end.first != end.second) {
    if (std::next(end.first) != end.second) return Error{"end: given twice"};
    const std::string& value = end.first->second;
    int64_t ns = 0;
    const auto [at, ec] = std::from_chars(value.data(), value.data() + value.size(), ns);
    if (ec != std::errc{} || at != value.data() + value.size() || ns <= 0) {
      return Error{"end: " + quoted_value(value) +
                   " is not a window's end (a whole number of nanoseconds since 1970)"};
    }
    out.end_unix_ns = ns;
  }
  return out;
}

HttpHandler make_pprof_handler(ProfileSource source, PprofHandlerLimits limits) {
  if (!limits.sleep) {
    limits.sleep = [](std::chrono::milliseconds d) { std::this_thread::sleep_for(d); };
  }
  auto windows = std::make_shared<Windows>(static_cast<size_t>(std::max(limits.max_waiting, 0)));
  return [source = std::move(source), limits = std::move(limits),
          windows](const HttpRequest& request) -> HttpResponse {
    auto window_asked = profile_window(request.query);
    if (!window_asked.ok()) return text(400, window_asked.error().text);
    if (const auto& window = window_asked.value()) {
      if (!window->end_unix_ns) {
        if (!source.window) return text(404, "window: no prediction window here");
        return profile_response(source.window(), source.pause);
      }
      if (!source.shown_window) return text(404, "end: no shown windows here");
      if (auto shown = source.shown_window(*window->end_unix_ns)) {
        return profile_response(*shown, source.pause);
      }
      return text(410, "end: the window ending at " + std::to_string(*window->end_unix_ns) +
                           " is no longer kept (the last " + std::to_string(ShownWindows::kKept) +
                           " windows the web view showed are); reload the page, or drop end= "
                           "for the window as it stands");
    }
    auto parsed = profile_seconds(request.query, limits.max_seconds);
    if (!parsed.ok()) return text(400, parsed.error().text);
    const std::optional<int> seconds = parsed.value();
    if (!seconds) return profile_response(source.cumulative(), source.pause);

    std::list<Windows::Open>::iterator window;
    if (auto refused = windows->take(
            request.peer, Windows::Clock::now() + std::chrono::seconds(*seconds), &window)) {
      return std::move(*refused);
    }
    const WindowSlot slot(*windows, window);
    source.drain_now();
    const StackProfile before = source.cumulative();
    auto left = std::chrono::milliseconds(std::chrono::seconds(*seconds));
    while (left.count() > 0) {
      if (request.cancelled()) return text(503, "profile request cancelled");
      const auto step = std::min(left, limits.poll);
      limits.sleep(step);
      left -= step;
    }
    if (request.cancelled()) return text(503, "profile request cancelled");
    source.drain_now();
    return profile_response(difference(source.cumulative(), before), source.pause);
  };
}

}  // namespace hucprof
