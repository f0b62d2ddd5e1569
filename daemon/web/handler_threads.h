#pragma once
#include <condition_variable>
#include <cstddef>
#include <functional>
#include <list>
#include <mutex>
#include <thread>
#include <vector>

namespace hucprof {

// The threads of an HttpServer's RouteLane::Own handlers: handlers that may block run one thread
// each, at most `max` at once.
class HandlerThreads {
 public:
  explicit HandlerThreads(size_t max) : max_(max) {}

  // False when `max` handlers run already, or after join_all (an I/O thread may route a request
  // while the server stops; a thread started then would never be joined).
  bool launch(std::function<void()> work);

  // After the server said stop (handlers see cancelled() turn true).
  void join_all();

 private:
  void reap();

  std::mutex mutex_;
  std::condition_variable idle_;
  size_t max_;
  size_t active_ = 0;
  bool closed_ = false;
  std::list<std::thread> threads_;
  std::vector<std::thread::id> finished_;
};

}  // namespace hucprof
