#include "core/profile_store.h"

#include <algorithm>

namespace hucprof {

namespace {

bool any(const ProfileValues& values) {
  return std::any_of(values.begin(), values.end(), [](uint64_t v) { return v != 0; });
}

void add_values(ProfileValues& to, const ProfileValues& more) {
  for (size_t v = 0; v < kProfileValueCount; ++v) to[v] += more[v];
}

void add_counts(std::map<std::string, uint64_t>& to, const std::map<std::string, uint64_t>& more) {
  for (const auto& [key, n] : more) to[key] += n;
}

constexpr double kNanos = 1e9;

}  // namespace

ProfileStore::Added& ProfileStore::Added::operator+=(const Added& more) {
  // Both sorted by key: merge, adding where a key is in both.
  std::vector<AddedValue> merged;
  merged.reserve(values.size() + more.values.size());
  auto a = values.cbegin(), b = more.values.cbegin();
  while (a != values.cend() || b != more.values.cend()) {
    if (b == more.values.cend() || (a != values.cend() && a->key() < b->key())) {
      merged.push_back(*a++);
    } else if (a == values.cend() || b->key() < a->key()) {
      merged.push_back(*b++);
    } else {
      merged.push_back(*a++);
      merged.back().n += (b++)->n;
    }
  }
  values = std::move(merged);
  add_counts(contexts, more.contexts);
  add_counts(excluded, more.excluded);
  add_counts(missed_checks, more.missed_checks);
  add_busy(workloads, more.workloads);
  return *this;
}

ProfileStore::ProfileStore(StackProfile header, std::chrono::duration<double> window,
                           double start_at)
    : header_(std::move(header)),
      last_add_ns_(header_.time_unix_ns),
      last_close_ns_(header_.time_unix_ns),
      window_(window.count()) {
  header_.samples.clear();
  header_.duration_ns = 0;
  last_interval_ = header_;
  window_.observe(start_at, {});
}

ProfileStore::ProfileStore(StackProfile header)
    : ProfileStore(header, std::chrono::minutes(5),
                   static_cast<double>(header.time_unix_ns) / kNanos) {}

void ProfileStore::add(const IntervalDeltas& deltas, int64_t now_unix_ns) {
  add(deltas, now_unix_ns, static_cast<double>(now_unix_ns) / kNanos);
}

void ProfileStore::add(const IntervalDeltas& deltas, int64_t now_unix_ns, double at) {
  std::lock_guard lock(mutex_);
  std::vector<AddedValue> drained;  // unsorted, with repeats
  for (const ProfileSample& delta : deltas.stacks) {
    if (!delta.stack || !delta.labels || !any(delta.values)) continue;
    auto [it, inserted] =
        index_.try_emplace(Key{delta.stack.get(), delta.labels.get()}, totals_.size());
    if (inserted) {
      totals_.push_back({delta.stack, delta.labels, {}});
      open_.push_back({});
    }
    add_values(totals_[it->second].values, delta.values);
    add_values(open_[it->second], delta.values);
    for (size_t v = 0; v < kProfileValueCount; ++v) {
      if (delta.values[v]) {
        drained.push_back(
            {static_cast<uint32_t>(it->second), static_cast<uint32_t>(v), delta.values[v]});
      }
    }
  }
  // One per key, sorted, as Added::operator+= expects.
  std::sort(drained.begin(), drained.end(),
            [](const AddedValue& a, const AddedValue& b) { return a.key() < b.key(); });
  Added added;
  added.contexts = deltas.sampled_by_context;
  added.excluded = deltas.excluded_samples;
  added.missed_checks = missed_checks_by_reason(deltas.missed);
  added.workloads = deltas.busy_by_workload;
  for (const AddedValue& a : drained) {
    if (!added.values.empty() && added.values.back().key() == a.key()) {
      added.values.back().n += a.n;
    } else {
      added.values.push_back(a);
    }
  }
  add_counts(header_.sampled_by_context, deltas.sampled_by_context);
  add_counts(open_contexts_, deltas.sampled_by_context);
  add_counts(header_.excluded_samples, deltas.excluded_samples);
  add_counts(open_excluded_, deltas.excluded_samples);
  add_counts(header_.missed_checks, added.missed_checks);
  add_counts(open_missed_, added.missed_checks);
  if (auto checks = deltas.missed_coverage.find(missed_what_name(MissedWhat::checks));
      checks != deltas.missed_coverage.end()) {
    header_.missed_checks_uncounted = checks->second.uncounted;
  }
  add_busy(header_.busy_by_workload, deltas.busy_by_workload);
  add_busy(open_workloads_, deltas.busy_by_workload);
  last_add_ns_ = std::max(last_add_ns_, now_unix_ns);
  window_.observe(at, std::move(added));
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
  last.excluded_samples = std::move(open_excluded_);
  open_excluded_.clear();
  last.missed_checks = std::move(open_missed_);
  open_missed_.clear();
  last.busy_by_workload = std::move(open_workloads_);
  open_workloads_.clear();
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

StackProfile ProfileStore::window() const {
  std::lock_guard lock(mutex_);
  StackProfile out = header_;
  out.samples.clear();
  out.sampled_by_context.clear();
  out.excluded_samples.clear();
  out.missed_checks.clear();
  out.busy_by_workload.clear();
  std::vector<ProfileValues> sums(totals_.size());
  window_.for_each([&](const Added& added) {
    for (const AddedValue& a : added.values) sums[a.index][a.value] += a.n;
    add_counts(out.sampled_by_context, added.contexts);
    add_counts(out.excluded_samples, added.excluded);
    add_counts(out.missed_checks, added.missed_checks);
    add_busy(out.busy_by_workload, added.workloads);
  });
  for (size_t i = 0; i < totals_.size(); ++i) {
    if (any(sums[i])) out.samples.push_back({totals_[i].stack, totals_[i].labels, sums[i]});
  }
  // The window's span is on the monotonic clock; it ends at the last drain's Unix time.
  out.duration_ns = static_cast<int64_t>((window_.end() - window_.start()) * kNanos);
  out.time_unix_ns = last_add_ns_ - out.duration_ns;
  return out;
}

}  // namespace hucprof
