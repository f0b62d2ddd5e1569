#include "core/profile/profile_store.h"

#include <algorithm>
#include <list>
#include <optional>
#include <set>
#include <string>
#include <utility>

#include "core/base/time_units.h"
#include "core/symbols/task_labels.h"

namespace hucprof {

namespace {

// A name already named is seen again at `at`: it becomes the most recent (workloads and comms
// alike). False when it is not named.
template <typename Names>
bool renew_named(Names& names, std::list<std::string>& order, const std::string& name, double at) {
  auto it = names.find(name);
  if (it == names.end()) return false;
  it->second.last_at = at;
  order.splice(order.begin(), order, it->second.order);
  return true;
}

bool any(const ProfileValues& values) {
  return std::any_of(values.begin(), values.end(), [](uint64_t v) { return v != 0; });
}

void add_values(ProfileValues& to, const ProfileValues& more) {
  for (size_t v = 0; v < kProfileValueCount; ++v) to[v] += more[v];
}

void add_counts(std::map<std::string, uint64_t>& to, const std::map<std::string, uint64_t>& more) {
  for (const auto& [key, n] : more) to[key] += n;
}

// A sum of counts is counted once any of them is: a drain that could not count adds nothing.
void add_count(std::optional<uint64_t>& to, const std::optional<uint64_t>& more) {
  if (more) to = to.value_or(0) + *more;
}

// A folded workload's busy CPU goes to kFoldedWorkload, which mixes kinds, so has none.
void fold_busy(BusyByWorkload& busy, const std::string& workload) {
  auto it = busy.find(workload);
  if (it == busy.end()) return;
  WorkloadBusy moved = it->second;
  moved.kind.clear();
  moved.named = 0;
  busy.erase(it);
  busy[std::string(kFoldedWorkload)] += moved;
}

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
  add_count(skipped_samples, more.skipped_samples);
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
                   ns_to_seconds(static_cast<double>(header.time_unix_ns))) {}

void ProfileStore::add(const IntervalDeltas& deltas, int64_t now_unix_ns) {
  add(deltas, now_unix_ns, ns_to_seconds(static_cast<double>(now_unix_ns)));
}

LabelsPtr ProfileStore::own(const ProfileLabels& labels) {
  if (auto it = labels_.find(labels); it != labels_.end()) return it->second;
  LabelsPtr copy = make_labels(labels);
  labels_.emplace(labels, copy);
  return copy;
}

size_t ProfileStore::slot_of(const StackPtr& stack, const LabelsPtr& labels) {
  if (auto it = index_.find(Key{stack.get(), labels.get()}); it != index_.end()) return it->second;
  size_t slot = totals_.size();
  if (!free_.empty()) {
    slot = free_.back();
    free_.pop_back();
    totals_[slot] = {stack, labels, {}};
  } else {
    totals_.push_back({stack, labels, {}});
    open_.push_back({});
  }
  index_.emplace(Key{stack.get(), labels.get()}, slot);
  if (auto named = named_.find(labels->workload); named != named_.end()) {
    named->second.slots.push_back(slot);
  }
  return slot;
}

std::string_view ProfileStore::admit(const std::string& workload, double at) {
  if (workload.empty() || workload == kFoldedWorkload) return workload;
  if (renew_named(named_, named_order_, workload, at)) return workload;
  fold_quiet();
  if (named_.size() >= kMaxNamedWorkloads) return kFoldedWorkload;
  named_order_.push_front(workload);
  named_.emplace(workload, Named{at, {}, named_order_.begin(), ++namings_});
  return workload;
}

void ProfileStore::fold_quiet() {
  std::map<size_t, size_t> moved;  // slot → the slot its counts went to
  std::vector<std::string> folded;
  // The window sums drains after its start: a workload last added to before it is in no sum
  // of the window's (its slots may be rewritten below all the same, never lost).
  while (named_.size() >= kNamedWorkloads && !named_order_.empty() &&
         named_.at(named_order_.back()).last_at < window_.start()) {
    folded.push_back(named_order_.back());
    fold(folded.back(), moved);
  }
  if (folded.empty()) return;
  // Whatever of theirs the window and the open interval still hold moves with them.
  move_in_window(moved);
  window_.for_each_point([&](Added& added) {
    for (const std::string& name : folded) fold_busy(added.workloads, name);
  });
  for (const std::string& name : folded) {
    fold_busy(header_.busy_by_workload, name);
    fold_busy(open_workloads_, name);
  }
  // Only now: a slot freed above must not take another folded one's counts in the same pass.
  for (const auto& [slot, target] : moved) free_.push_back(slot);
}

void ProfileStore::move_in_window(const std::map<size_t, size_t>& moved) {
  window_.for_each_point([&](Added& added) {
    bool changed = false;
    for (AddedValue& a : added.values) {
      if (auto it = moved.find(a.index); it != moved.end()) {
        a.index = static_cast<uint32_t>(it->second);
        changed = true;
      }
    }
    if (!changed) return;
    std::vector<AddedValue> values = std::move(added.values);
    added.values.clear();
    std::sort(values.begin(), values.end(),
              [](const AddedValue& a, const AddedValue& b) { return a.key() < b.key(); });
    for (const AddedValue& a : values) {
      if (!added.values.empty() && added.values.back().key() == a.key()) {
        added.values.back().n += a.n;
      } else {
        added.values.push_back(a);
      }
    }
  });
}

std::string_view ProfileStore::admit_comm(const std::string& comm, double at) {
  if (comm.empty() || comm == kFoldedComm) return comm;
  if (renew_named(named_comms_, named_comms_order_, comm, at)) return comm;
  fold_quiet_comms();
  if (named_comms_.size() >= kMaxNamedComms) return kFoldedComm;
  named_comms_order_.push_front(comm);
  named_comms_.emplace(comm, NamedComm{at, named_comms_order_.begin()});
  return comm;
}

void ProfileStore::fold_quiet_comms() {
  std::set<std::string, std::less<>> folded;
  // As fold_quiet: a comm last added to before the window's start is in no sum of the window's.
  while (named_comms_.size() >= kNamedComms && !named_comms_order_.empty() &&
         named_comms_.at(named_comms_order_.back()).last_at < window_.start()) {
    named_comms_.erase(named_comms_order_.back());
    folded.insert(std::move(named_comms_order_.back()));
    named_comms_order_.pop_back();
  }
  if (folded.empty()) return;
  std::map<size_t, size_t> moved;  // slot → the slot its counts went to
  // By index: slot_of may grow totals_ (with kFoldedComm entries, which this skips).
  for (size_t slot = 0; slot < totals_.size(); ++slot) {
    const ProfileSample entry = totals_[slot];
    if (!entry.stack || !folded.contains(entry.labels->comm)) continue;
    ProfileLabels labels = *entry.labels;
    labels.comm = kFoldedComm;
    moved.emplace(slot, move_entry(slot, std::move(labels)));
    // Its workload's entries are this slot no more (the slot may go to another's).
    if (auto named = named_.find(entry.labels->workload); named != named_.end()) {
      std::erase(named->second.slots, slot);
    }
  }
  // Seen again, it starts anew under new labels.
  std::erase_if(labels_, [&](const auto& l) { return folded.contains(l.first.comm); });
  folded_comms_ += folded.size();
  move_in_window(moved);
  for (const auto& [slot, target] : moved) free_.push_back(slot);
}

size_t ProfileStore::move_entry(size_t slot, ProfileLabels labels) {
  const ProfileSample entry = totals_[slot];  // a copy: slot_of may grow totals_
  const size_t target = slot_of(entry.stack, own(labels));
  add_values(totals_[target].values, entry.values);
  add_values(open_[target], open_[slot]);
  index_.erase(Key{entry.stack.get(), entry.labels.get()});
  totals_[slot] = {};
  open_[slot] = {};
  return target;
}

void ProfileStore::fold(const std::string& workload, std::map<size_t, size_t>& moved) {
  auto named = named_.find(workload);
  for (const size_t slot : named->second.slots) {
    const ProfileSample entry = totals_[slot];  // a copy: slot_of may grow totals_
    ProfileLabels labels = *entry.labels;
    labels.workload = kFoldedWorkload;
    labels.workload_kind.clear();
    moved.emplace(slot, move_entry(slot, std::move(labels)));
  }
  // Seen again, it starts anew under new labels.
  std::erase_if(labels_, [&](const auto& l) { return l.first.workload == workload; });
  named_order_.erase(named->second.order);
  named_.erase(named);
  ++folded_workloads_;
}

void ProfileStore::add(const IntervalDeltas& deltas, int64_t now_unix_ns, double at) {
  std::lock_guard lock(mutex_);
  // Every workload and comm of this drain is recent: none of them may be folded for another's
  // sake.
  for (const ProfileSample& delta : deltas.stacks) {
    if (!delta.labels) continue;
    if (named_.contains(delta.labels->workload)) admit(delta.labels->workload, at);
    if (named_comms_.contains(delta.labels->comm)) admit_comm(delta.labels->comm, at);
  }
  for (const auto& [workload, busy] : deltas.busy_by_workload) {
    if (named_.contains(workload)) admit(workload, at);
  }
  std::vector<AddedValue> drained;  // unsorted, with repeats
  for (const ProfileSample& delta : deltas.stacks) {
    if (!delta.stack || !delta.labels || !any(delta.values)) continue;
    const std::string_view kept_as = admit(delta.labels->workload, at);
    const std::string_view comm_kept_as = admit_comm(delta.labels->comm, at);
    LabelsPtr labels;
    if (kept_as == delta.labels->workload && comm_kept_as == delta.labels->comm) {
      labels = own(*delta.labels);
    } else {
      ProfileLabels folded = *delta.labels;
      if (kept_as != delta.labels->workload) {
        folded.workload = kept_as;
        folded.workload_kind.clear();
      }
      folded.comm = comm_kept_as;
      labels = own(folded);
    }
    const size_t slot = slot_of(delta.stack, labels);
    add_values(totals_[slot].values, delta.values);
    add_values(open_[slot], delta.values);
    for (size_t v = 0; v < kProfileValueCount; ++v) {
      if (delta.values[v]) {
        drained.push_back({static_cast<uint32_t>(slot), static_cast<uint32_t>(v), delta.values[v]});
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
  added.skipped_samples = skipped_samples(deltas.missed);
  for (const auto& [workload, busy] : deltas.busy_by_workload) {
    const std::string_view kept_as = admit(workload, at);
    WorkloadBusy counted = busy;
    if (auto named = named_.find(kept_as); named != named_.end()) {
      counted.named = named->second.naming;
    } else {
      counted.kind.clear();
      counted.named = 0;
    }
    added.workloads[std::string(kept_as)] += counted;
  }
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
  add_count(header_.skipped_samples, added.skipped_samples);
  add_count(open_skipped_, added.skipped_samples);
  if (auto checks = deltas.missed_coverage.find(missed_what_name(MissedWhat::checks));
      checks != deltas.missed_coverage.end()) {
    header_.missed_checks_uncounted = checks->second.uncounted;
  }
  add_busy(header_.busy_by_workload, added.workloads);
  add_busy(open_workloads_, added.workloads);
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
  // Counted since start: an interval without a drain that counted them skipped none.
  last.skipped_samples =
      header_.skipped_samples ? std::optional<uint64_t>(open_skipped_.value_or(0)) : open_skipped_;
  open_skipped_.reset();
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
  out.samples.reserve(totals_.size() - free_.size());
  for (const ProfileSample& entry : totals_) {
    if (entry.stack) out.samples.push_back(entry);
  }
  out.duration_ns = std::max<int64_t>(0, last_add_ns_ - header_.time_unix_ns);
  return out;
}

ProfileStore::Size ProfileStore::size() const {
  std::lock_guard lock(mutex_);
  Size out;
  out.samples = totals_.size() - free_.size();
  out.label_sets = labels_.size();
  out.named_workloads = named_.size();
  out.folded_workloads = folded_workloads_;
  out.named_comms = named_comms_.size();
  out.folded_comms = folded_comms_;
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
  // As last_interval(): a 0 once the store counts them, though no drain of the window did.
  if (out.skipped_samples) out.skipped_samples = 0;
  out.busy_by_workload.clear();
  std::vector<ProfileValues> sums(totals_.size());
  window_.for_each([&](const Added& added) {
    for (const AddedValue& a : added.values) sums[a.index][a.value] += a.n;
    add_counts(out.sampled_by_context, added.contexts);
    add_counts(out.excluded_samples, added.excluded);
    add_counts(out.missed_checks, added.missed_checks);
    add_count(out.skipped_samples, added.skipped_samples);
    add_busy(out.busy_by_workload, added.workloads);
  });
  for (size_t i = 0; i < totals_.size(); ++i) {
    if (any(sums[i])) out.samples.push_back({totals_[i].stack, totals_[i].labels, sums[i]});
  }
  // The window's span is on the monotonic clock; it ends at the last drain's Unix time.
  out.duration_ns = static_cast<int64_t>((window_.end() - window_.start()) *
                                         static_cast<double>(kNanosPerSecond));
  out.time_unix_ns = last_add_ns_ - out.duration_ns;
  return out;
}

}  // namespace hucprof
