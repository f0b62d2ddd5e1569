#include "core/stack_profile.h"

#include <algorithm>
#include <utility>

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
  // Both profiles come from one store: equal stacks and labels are equal pointers.
  using Key = std::pair<const ProfileStack*, const ProfileLabels*>;
  std::map<Key, const ProfileValues*> before;
  for (const ProfileSample& s : earlier.samples) {
    before.emplace(Key{s.stack.get(), s.labels.get()}, &s.values);
  }

  StackProfile out = later;
  out.samples.clear();
  for (const ProfileSample& s : later.samples) {
    ProfileSample d = s;
    if (auto it = before.find(Key{s.stack.get(), s.labels.get()}); it != before.end()) {
      for (size_t v = 0; v < kProfileValueCount; ++v)
        d.values[v] = minus(s.values[v], (*it->second)[v]);
    }
    if (std::any_of(d.values.begin(), d.values.end(), [](uint64_t x) { return x != 0; })) {
      out.samples.push_back(std::move(d));
    }
  }
  subtract_counts(out.sampled_by_context, earlier.sampled_by_context);
  subtract_counts(out.excluded_samples, earlier.excluded_samples);
  subtract_counts(out.missed_checks, earlier.missed_checks);
  for (auto& [workload, busy] : out.busy_by_workload) {
    if (auto it = earlier.busy_by_workload.find(workload); it != earlier.busy_by_workload.end()) {
      busy -= it->second;
    }
  }
  std::erase_if(out.busy_by_workload, [](const auto& w) { return w.second.busy() == 0; });
  const int64_t earlier_end = earlier.time_unix_ns + earlier.duration_ns;
  out.time_unix_ns = earlier_end;
  out.duration_ns = std::max<int64_t>(0, later.time_unix_ns + later.duration_ns - earlier_end);
  return out;
}

}  // namespace hucprof
