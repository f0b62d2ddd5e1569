#pragma once
#include <cstddef>
#include <deque>
#include <optional>
#include <utility>

namespace hucprof {

// The last `window` seconds of drains, kept as increments. The prediction (UsercopyCostShare) and
// the web view's profile (ProfileStore::window) both sum one of these, observed at the same
// drains with the same times, so the two cover exactly the same drains and their shares agree.
//
// The window starts at the newest kept point at or before now - window; while there is less
// history than that, at the first observation. Points are thinned to kMaxPoints spread over the
// window, so memory does not grow with window / drain interval, and the start is exact to
// window / kMaxPoints. Delta needs a default value (nothing) and `+=`.
template <typename Delta>
class DrainWindow {
 public:
  static constexpr size_t kMaxPoints = 240;

  explicit DrainWindow(double window_seconds) : window_(window_seconds) {}

  // What was added since the previous observe(), up to monotonic time `at` (seconds; never
  // earlier than the previous one). The first observation only marks where counting starts: its
  // delta is before every window.
  void observe(double at, Delta delta) {
    if (points_.empty()) {
      points_.push_back({at, Delta{}});
      latest_ = at;
      return;
    }
    latest_ = at;
    open_ += std::move(delta);
    if (at - points_.back().at >= window_ / kMaxPoints) {
      points_.push_back({at, std::move(open_)});
      open_ = Delta{};
    }
    // Keep one point at or before the window start: where the next window begins.
    while (points_.size() > 1 && points_[1].at <= at - window_) points_.pop_front();
  }

  bool empty() const { return points_.empty(); }
  // The span summed by for_each: from the window's first point to the latest observation.
  double start() const { return points_.empty() ? 0 : points_.front().at; }
  double end() const { return latest_; }

  // f(Delta&) for every delta kept, inside the window or not: to rewrite what they refer to.
  template <typename F>
  void for_each_point(F&& f) {
    for (Point& p : points_) f(p.since_previous);
    f(open_);
  }

  // f(const Delta&) for everything added inside the window, oldest first.
  template <typename F>
  void for_each(F&& f) const {
    for (size_t i = 1; i < points_.size(); ++i) f(points_[i].since_previous);
    f(open_);
  }

 private:
  struct Point {
    double at = 0;
    Delta since_previous;  // added after the point before, up to this one
  };
  double window_;
  std::deque<Point> points_;
  Delta open_;  // added since the newest point
  double latest_ = 0;
};

}  // namespace hucprof
