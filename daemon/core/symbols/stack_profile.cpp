#include "core/symbols/stack_profile.h"

#include <algorithm>
#include <map>
#include <string>
#include <utility>

#include "core/symbols/task_labels.h"

namespace hucprof {

namespace {

uint64_t minus(uint64_t later, uint64_t earlier) { return later > earlier ? later - earlier : 0; }

void subtract_counts(std::map<std::string, uint64_t>& counts,
                     const std::map<std::string, uint64_t>& earlier) {
  for (auto& [key, n] : counts) {
    auto it = earlier.find(key);
    if (it != earlier.end()) n = minus(n, it->second);
  }
}

}  // namespace

WorkloadBusy& WorkloadBusy::operator+=(const WorkloadBusy& more) {
  if (kind.empty()) kind = more.kind;
  if (named == 0) named = more.named;
  kernel += more.kernel;
  user += more.user;
  interrupts += more.interrupts;
  return *this;
}

WorkloadBusy& WorkloadBusy::operator-=(const WorkloadBusy& less) {
  kernel = minus(kernel, less.kernel);
  user = minus(user, less.user);
  interrupts = minus(interrupts, less.interrupts);
  return *this;
}

void add_busy(BusyByWorkload& to, const BusyByWorkload& more) {
  for (const auto& [workload, busy] : more) to[workload] += busy;
}

StackProfile difference(const StackProfile& later, const StackProfile& earlier) {
  // Both profiles come from one store: equal stacks and labels are equal pointers. What of
  // earlier later lacks was folded (ProfileStore): it is in later under kFoldedWorkload,
  // kFoldedComm or both.
  using Key = std::pair<const ProfileStack*, const ProfileLabels*>;
  StackProfile out = later;
  std::map<Key, size_t> at;  // → out.samples
  for (size_t i = 0; i < out.samples.size(); ++i) {
    at.emplace(Key{out.samples[i].stack.get(), out.samples[i].labels.get()}, i);
  }
  std::map<std::pair<const ProfileStack*, ProfileLabels>, size_t> folded;  // made when needed
  auto subtract = [&](ProfileValues& from, const ProfileValues& values) {
    for (size_t v = 0; v < kProfileValueCount; ++v) from[v] = minus(from[v], values[v]);
  };
  for (const ProfileSample& s : earlier.samples) {
    if (auto it = at.find(Key{s.stack.get(), s.labels.get()}); it != at.end()) {
      subtract(out.samples[it->second].values, s.values);
      continue;
    }
    // Folded since: its workload, its comm or both (ProfileStore).
    const bool workload_folds =
        !s.labels->workload.empty() && s.labels->workload != kFoldedWorkload;
    const bool comm_folds = !s.labels->comm.empty() && s.labels->comm != kFoldedComm;
    if (!workload_folds && !comm_folds) continue;
    if (folded.empty()) {
      for (size_t i = 0; i < out.samples.size(); ++i) {
        const ProfileSample& f = out.samples[i];
        if (f.labels->workload == kFoldedWorkload || f.labels->comm == kFoldedComm)
          folded.emplace(std::pair{f.stack.get(), *f.labels}, i);
      }
    }
    auto subtract_from = [&](bool fold_workload, bool fold_comm) {
      ProfileLabels labels = *s.labels;
      if (fold_workload) {
        labels.workload = kFoldedWorkload;
        labels.workload_kind.clear();
      }
      if (fold_comm) labels.comm = kFoldedComm;
      auto it = folded.find(std::pair{s.stack.get(), labels});
      if (it == folded.end()) return false;
      subtract(out.samples[it->second].values, s.values);
      return true;
    };
    // One fold at a time first: where both could be, the one that happened has the entry.
    if (workload_folds && subtract_from(true, false)) continue;
    if (comm_folds && subtract_from(false, true)) continue;
    if (workload_folds && comm_folds) subtract_from(true, true);
  }
  std::erase_if(out.samples, [](const ProfileSample& s) {
    return std::none_of(s.values.begin(), s.values.end(), [](uint64_t x) { return x != 0; });
  });
  subtract_counts(out.sampled_by_context, earlier.sampled_by_context);
  subtract_counts(out.excluded_samples, earlier.excluded_samples);
  subtract_counts(out.missed_checks, earlier.missed_checks);
  // Unset in earlier: none counted before it, so all of later's are the window's.
  if (out.skipped_samples) {
    out.skipped_samples = minus(*out.skipped_samples, earlier.skipped_samples.value_or(0));
  }
  for (const auto& [workload, busy] : earlier.busy_by_workload) {
    auto it = out.busy_by_workload.find(workload);
    if ((it == out.busy_by_workload.end() || it->second.named != busy.named) && !workload.empty()) {
      it = out.busy_by_workload.find(std::string(kFoldedWorkload));
    }
    if (it != out.busy_by_workload.end()) it->second -= busy;
  }
  std::erase_if(out.busy_by_workload, [](const auto& w) { return w.second.busy() == 0; });
  const int64_t earlier_end = earlier.time_unix_ns + earlier.duration_ns;
  out.time_unix_ns = earlier_end;
  out.duration_ns = std::max<int64_t>(0, later.time_unix_ns + later.duration_ns - earlier_end);
  return out;
}

}  // namespace hucprof
