#include "export/pprof_handler.h"

#include <algorithm>
#include <charconv>
#include <thread>
#include <utility>

#include "core/quoted_value.h"
#include "export/pprof_writer.h"

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

// Holds one of the limited waiting slots for as long as it lives.
class WaitSlot {
 public:
  WaitSlot(std::atomic<int>& waiting, int max) : waiting_(waiting) {
    taken_ = waiting_.fetch_add(1) < max;
    if (!taken_) waiting_.fetch_sub(1);
  }
  ~WaitSlot() {
    if (taken_) waiting_.fetch_sub(1);
  }
  WaitSlot(const WaitSlot&) = delete;
  WaitSlot& operator=(const WaitSlot&) = delete;
  bool taken() const { return taken_; }

 private:
  std::atomic<int>& waiting_;
  bool taken_ = false;
};

}  // namespace

std::variant<std::optional<int>, std::string> profile_seconds(
    const std::multimap<std::string, std::string>& query, int max_seconds) {
  const auto given = query.equal_range("seconds");
  if (given.first == given.second) return std::nullopt;
  if (std::next(given.first) != given.second) return "seconds: given twice";
  const std::string& value = given.first->second;
  int seconds = 0;
  const auto [end, ec] = std::from_chars(value.data(), value.data() + value.size(), seconds);
  if (ec != std::errc{} || end != value.data() + value.size() || seconds < 1 ||
      seconds > max_seconds) {
    return "seconds: " + quoted_value(value) + " is not a whole number of seconds from 1 to " +
           std::to_string(max_seconds);
  }
  return seconds;
}

HttpHandler make_pprof_handler(ProfileSource source, PprofHandlerLimits limits) {
  if (!limits.sleep) {
    limits.sleep = [](std::chrono::milliseconds d) { std::this_thread::sleep_for(d); };
  }
  auto waiting = std::make_shared<std::atomic<int>>(0);
  return [source = std::move(source), limits = std::move(limits),
          waiting](const HttpRequest& request) -> HttpResponse {
    auto parsed = profile_seconds(request.query, limits.max_seconds);
    if (auto* error = std::get_if<std::string>(&parsed)) return text(400, std::move(*error));
    const std::optional<int> seconds = std::get<std::optional<int>>(parsed);
    if (!seconds) return profile_response(source.cumulative(), source.pause);

    WaitSlot slot(*waiting, limits.max_waiting);
    if (!slot.taken()) {
      return text(429, "too many profile requests waiting (at most " +
                           std::to_string(limits.max_waiting) + "); try again later");
    }
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
