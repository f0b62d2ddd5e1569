#include "web/handler_threads.h"

#include <chrono>

#include <spdlog/spdlog.h>

namespace hucprof {
namespace {

constexpr std::chrono::seconds kSlowHandlerWarning{2};

}  // namespace

bool HandlerThreads::launch(std::function<void()> work) {
  std::lock_guard lock(mutex_);
  reap();
  if (closed_ || active_ >= max_) return false;
  ++active_;
  threads_.emplace_back([this, work = std::move(work)] {
    work();
    std::lock_guard done(mutex_);
    --active_;
    finished_.push_back(std::this_thread::get_id());
    idle_.notify_all();
  });
  return true;
}

void HandlerThreads::join_all() {
  std::unique_lock lock(mutex_);
  closed_ = true;
  if (!idle_.wait_for(lock, kSlowHandlerWarning, [this] { return active_ == 0; })) {
    spdlog::warn("web server stopping: waiting for {} request handler(s) to return", active_);
    idle_.wait(lock, [this] { return active_ == 0; });
  }
  for (auto& thread : threads_) thread.join();
  threads_.clear();
  finished_.clear();
}

void HandlerThreads::reap() {
  for (const auto id : finished_) {
    for (auto it = threads_.begin(); it != threads_.end(); ++it) {
      if (it->get_id() == id) {
        it->join();  // it has left `work` and only unwinds: this returns at once
        threads_.erase(it);
        break;
      }
    }
  }
  finished_.clear();
}

}  // namespace hucprof
