#include "core/profile_store.h"

#include <algorithm>

namespace hucprof {

namespace {

bool any(const ProfileValues& values) {
  return std::any_of(values.begin(), values.end(), [](uint64_t v) { return v != 0; });
}

}  // namespace

ProfileStore::ProfileStore(StackProfile header)
    : header_(std::move(header)),
      last_add_ns_(header_.time_unix_ns),
      last_close_ns_(header_.time_unix_ns) {
  header_.samples.clear();
  header_.duration_ns = 0;
  last_interval_ = header_;
}

void ProfileStore::add(const IntervalDeltas& deltas, int64_t now_unix_ns) {
  std::lock_guard lock(mutex_);
  for (const ProfileSample& delta : deltas.stacks) {
    if (!delta.stack || !delta.labels || !any(delta.values)) continue;
    auto [it, inserted] =
        index_.try_emplace(Key{delta.stack.get(), delta.labels.get()}, totals_.size());
    if (inserted) {
      totals_.push_back({delta.stack, delta.labels, {}});
      open_.push_back({});
    }
    for (size_t v = 0; v < kProfileValueCount; ++v) {
      totals_[it->second].values[v] += delta.values[v];
      open_[it->second][v] += delta.values[v];
    }
  }
  for (const auto& [context, n] : deltas.sampled_by_context) {
    header_.sampled_by_context[context] += n;
    open_contexts_[context] += n;
  }
  last_add_ns_ = std::max(last_add_ns_, now_unix_ns);
}

void ProfileStore::close_interval(int64_t now_unix_ns) {
  std::lock_guard lock(mutex_);
  StackProfile last = header_;
  last.samples.clear();
  for (size_t i = 0; i < totals_.size(); ++i) {
    if (!any(open_[i])) continue;
    last.samples.push_back({totals_[i].stack, totals_[i].labels, open_[i]});
    open_[i] = {};
  }
  last.sampled_by_context = std::move(open_contexts_);
  open_contexts_.clear();
  last.time_unix_ns = last_close_ns_;
  last.duration_ns = std::max<int64_t>(0, now_unix_ns - last_close_ns_);
  last_close_ns_ = now_unix_ns;
  last_interval_ = std::move(last);
}

StackProfile ProfileStore::cumulative() const {
  std::lock_guard lock(mutex_);
  StackProfile out = header_;
  out.samples = totals_;
  out.duration_ns = std::max<int64_t>(0, last_add_ns_ - header_.time_unix_ns);
  return out;
}

StackProfile ProfileStore::last_interval() const {
  std::lock_guard lock(mutex_);
  return last_interval_;
}

}  // namespace hucprof
