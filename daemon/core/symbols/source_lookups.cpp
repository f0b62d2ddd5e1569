#include "core/symbols/source_lookups.h"

namespace hucprof {

SourceLookups::SourceLookups(SourceResolver& resolver, size_t max_waiting)
    : resolver_(resolver), max_waiting_(max_waiting ? max_waiting : 1), ready_(resolver.ready()) {
  // A download that arrives (debuginfod) is taken in on this worker, like everything else.
  resolver_.set_news_listener([this] { post(Kind::News); });
}

SourceLookups::~SourceLookups() {
  resolver_.set_news_listener(nullptr);
  {
    std::lock_guard lock(mutex_);
    stopping_ = true;
  }
  wake_.notify_all();
  if (worker_.joinable()) worker_.join();
}

void SourceLookups::start_locked() {
  if (!worker_.joinable()) worker_ = std::thread([this] { work(); });
}

bool SourceLookups::ask(const SourceAddress& at, uint64_t generation) {
  {
    std::lock_guard lock(mutex_);
    if (lookups_waiting_ >= max_waiting_) return false;
    jobs_.push_back({Kind::Lookup, at, generation});
    ++lookups_waiting_;
    start_locked();
  }
  wake_.notify_one();
  return true;
}

void SourceLookups::modules_changed() { post(Kind::ModulesChanged); }

void SourceLookups::end_batch() { post(Kind::EndBatch); }

void SourceLookups::post(Kind kind) {
  {
    std::lock_guard lock(mutex_);
    jobs_.push_back({kind, {}, 0});
    start_locked();
  }
  wake_.notify_one();
}

SourceLookups::Answers SourceLookups::take() {
  std::lock_guard lock(mutex_);
  return std::exchange(answers_, {});
}

bool SourceLookups::wait_answered(std::chrono::milliseconds limit) {
  std::unique_lock lock(mutex_);
  return answered_.wait_for(lock, limit, [&] { return jobs_.empty() && !busy_; });
}

void SourceLookups::work() {
  resolver_.start_threads();  // unlocked: its threads tell news through post()
  std::unique_lock lock(mutex_);
  while (true) {
    wake_.wait(lock, [&] { return stopping_ || !jobs_.empty(); });
    if (stopping_) return;
    const Job job = jobs_.front();
    jobs_.pop_front();
    busy_ = true;
    lock.unlock();
    SourceLinesPtr lines;
    bool news = false;
    switch (job.kind) {
      case Kind::Lookup:
        lines = resolver_.lines(job.at);
        break;
      case Kind::ModulesChanged:
        resolver_.modules_changed();
        break;
      case Kind::EndBatch:
        resolver_.end_batch();
        break;
      case Kind::News:
        news = resolver_.take_news();
        ready_.store(resolver_.ready(), std::memory_order_relaxed);
        break;
    }
    lock.lock();
    if (job.kind == Kind::Lookup) {
      answers_.lines.push_back({job.at, std::move(lines), job.generation});
      --lookups_waiting_;
    }
    answers_.news = answers_.news || news;
    busy_ = false;
    answered_.notify_all();
  }
}

}  // namespace hucprof
