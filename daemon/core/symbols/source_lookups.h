#pragma once
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <mutex>
#include <thread>
#include <utility>
#include <vector>

#include "core/symbols/source_resolver.h"

namespace hucprof {

// Looks addresses up in the kernel's debuginfo on a thread of its own, so that no drain waits
// for it: the first lookup in a compilation unit reads its line table and indexes its functions
// (milliseconds each; a drain full of new call sites touches hundreds of units). The worker owns
// the resolver: every call into it, news and module changes included, happens on that thread,
// in the order asked. The thread starts with the first request (a drain's), not before:
// hucprof drops its capabilities while it is still single-threaded.
class SourceLookups {
 public:
  SourceLookups(SourceResolver& resolver, size_t max_waiting);
  ~SourceLookups();
  SourceLookups(const SourceLookups&) = delete;
  SourceLookups& operator=(const SourceLookups&) = delete;

  struct Answer {
    SourceAddress at;
    SourceLinesPtr lines;
    uint64_t generation = 0;  // as asked
  };
  struct Answers {
    std::vector<Answer> lines;
    // New debuginfo arrived (a download): answers before it may lack lines it has.
    bool news = false;
  };

  // Queued behind what was asked before; false when max_waiting are waiting already.
  bool ask(const SourceAddress& at, uint64_t generation);
  // The kernel's module list changed: the resolver forgets its modules before later lookups.
  void modules_changed();
  // After a drain that asked: once the lookups asked so far are done, the pages they mapped in
  // are given back.
  void end_batch();
  // What was answered since the last take, in the order answered.
  Answers take();
  // The resolver can answer (an accepted vmlinux), as of its last news.
  bool ready() const { return ready_.load(std::memory_order_relaxed); }
  // Blocks until everything asked so far is done, at most `limit`; true when it was.
  bool wait_answered(std::chrono::milliseconds limit);

 private:
  enum class Kind { Lookup, ModulesChanged, EndBatch, News };
  struct Job {
    Kind kind = Kind::Lookup;
    SourceAddress at;
    uint64_t generation = 0;
  };
  void post(Kind kind);
  void start_locked();
  void work();

  SourceResolver& resolver_;
  const size_t max_waiting_;
  std::atomic<bool> ready_;
  std::mutex mutex_;
  std::condition_variable wake_, answered_;
  std::deque<Job> jobs_;
  size_t lookups_waiting_ = 0;  // Lookup jobs in jobs_
  bool busy_ = false;           // the worker is carrying out a job
  Answers answers_;
  bool stopping_ = false;
  std::thread worker_;  // started by the first request
};

}  // namespace hucprof
