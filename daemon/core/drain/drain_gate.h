#pragma once
#include <condition_variable>
#include <mutex>

namespace hucprof {

// Lets work that runs beside the drain loop (encoding a profile, rendering the web view) step
// aside while a drain runs, so that on a busy machine the drain keeps the CPU it would have had
// without them. Drains mark themselves (Draining); the other work calls wait_while_draining() at
// points where pausing is cheap.
class DrainGate {
 public:
  class Draining {
   public:
    explicit Draining(DrainGate& gate) : gate_(gate) {
      std::lock_guard lock(gate_.mutex_);
      ++gate_.draining_;
    }
    ~Draining() {
      {
        std::lock_guard lock(gate_.mutex_);
        --gate_.draining_;
      }
      gate_.idle_.notify_all();
    }
    Draining(const Draining&) = delete;
    Draining& operator=(const Draining&) = delete;

   private:
    DrainGate& gate_;
  };

  void wait_while_draining() {
    std::unique_lock lock(mutex_);
    idle_.wait(lock, [this] { return draining_ == 0; });
  }

 private:
  std::mutex mutex_;
  std::condition_variable idle_;
  int draining_ = 0;
};

}  // namespace hucprof
