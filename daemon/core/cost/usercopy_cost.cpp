#include "core/cost/usercopy_cost.h"

#include "core/base/time_units.h"
#include "core/cost/usercopy_cost_share.h"
#include "core/kernel/interrupt_entries.h"

#include <algorithm>
#include <map>
#include <string_view>
#include <tuple>

namespace hucprof {

namespace {

template <typename Map>
std::vector<std::pair<std::string, uint64_t>> largest_first(const Map& m) {
  std::vector<std::pair<std::string, uint64_t>> out(m.begin(), m.end());
  std::stable_sort(out.begin(), out.end(),
                   [](const auto& a, const auto& b) { return a.second > b.second; });
  return out;
}

struct RowBuilder {
  CallsiteCost row;
  std::map<std::string, uint64_t> checks;
  // By function names: stacks that differ only in offsets read the same to a person.
  std::map<std::vector<std::string_view>, StackCost> stacks;
  std::map<std::vector<CopyStep>, CopyCost> copies;
};

bool has_source_lines(const ProfileStack& stack) {
  return std::any_of(stack.begin(), stack.end(), [](const FramePtr& f) { return f->source; });
}

template <typename T>
std::vector<T> largest(std::map<std::vector<CopyStep>, T>& by_path, size_t n) {
  std::vector<T> out;
  for (auto& [path, cost] : by_path) out.push_back(std::move(cost));
  std::stable_sort(out.begin(), out.end(),
                   [](const T& a, const T& b) { return a.value > b.value; });
  if (out.size() > n) out.resize(n);
  return out;
}

// by_calls: the shares are of the checks' calls (a profile without sampling), not their CPU.
std::vector<WorkloadCost> workload_rows(std::map<std::string, WorkloadCost> by_name,
                                        const BusyByWorkload& busy, double period_s,
                                        bool by_calls) {
  auto measure = [by_calls](const WorkloadCost& w) { return by_calls ? w.calls : w.samples; };
  uint64_t in_checks = 0;
  for (const auto& [name, w] : by_name) in_checks += measure(w);
  std::vector<WorkloadCost> rows;
  for (auto& [name, w] : by_name) {
    if (measure(w) == 0) continue;
    w.workload = name;
    if (auto it = busy.find(name); it != busy.end()) w.busy_samples = it->second.busy();
    w.cpu_seconds = static_cast<double>(w.samples) * period_s;
    w.share_of_checks = static_cast<double>(measure(w)) / static_cast<double>(in_checks);
    if (w.busy_samples >= w.samples && w.busy_samples > 0) {
      w.share_of_busy = static_cast<double>(w.samples) / static_cast<double>(w.busy_samples);
    }
    rows.push_back(std::move(w));
  }
  std::stable_sort(rows.begin(), rows.end(), [&](const WorkloadCost& a, const WorkloadCost& b) {
    return measure(a) > measure(b);
  });
  return rows;
}

}  // namespace

std::optional<double> UsercopyCost::share_of_kernel() const {
  if (!sampling || kernel_samples == 0) return std::nullopt;
  return static_cast<double>(check_samples) / static_cast<double>(kernel_samples);
}

std::optional<double> UsercopyCost::share_of_busy() const {
  if (!sampling || busy_samples() == 0) return std::nullopt;
  return static_cast<double>(check_samples) / static_cast<double>(busy_samples());
}

std::optional<double> UsercopyCost::speedup_with_checks_off() const {
  const auto share = share_of_busy();
  if (!share) return std::nullopt;
  return speedup_without(*share);
}

std::optional<double> UsercopyCost::cores() const {
  if (!sampling || window_seconds <= 0) return std::nullopt;
  return check_cpu_seconds / window_seconds;
}

UsercopyCost summarize_cost(const StackProfile& profile, size_t top_stacks) {
  UsercopyCost cost;
  cost.sampling = profile.sampling;
  cost.probes = profile.probes;
  cost.latency = profile.latency;
  cost.window_seconds = ns_to_seconds(static_cast<double>(profile.duration_ns));
  const double period_s = ns_to_seconds(static_cast<double>(profile.sample_period_ns));
  auto count_of = [](const std::map<std::string, uint64_t>& counts, const char* key) {
    auto it = counts.find(key);
    return it == counts.end() ? uint64_t{0} : it->second;
  };
  cost.kernel_samples = count_of(profile.sampled_by_context, "kernel");
  cost.user_samples = count_of(profile.sampled_by_context, "user");
  cost.interrupt_samples = count_of(profile.excluded_samples, "interrupt");
  // Rank by what the profile measures best: CPU time when it sampled, calls otherwise.
  const ProfileValue rank_by = profile.sampling ? kSamples : kCalls;

  std::map<std::pair<std::string, std::string>, RowBuilder> rows;
  std::map<std::string, WorkloadCost> workloads;
  static const FoldingRules kRules = FoldingRules::defaults();
  std::map<const ProfileStack*, CopyPath> paths;  // a stack's path, worked out once
  for (const ProfileSample& s : profile.samples) {
    // The sampler's rule, for a profile that was not filtered at the source.
    if (profile.sampling && s.values[kSamples] && s.stack && interrupt_before_check(*s.stack)) {
      cost.interrupt_samples += s.values[kSamples];
      continue;
    }
    if (!s.labels->workload.empty() && (s.values[kSamples] || s.values[kCalls])) {
      WorkloadCost& w = workloads[s.labels->workload];
      w.kind = s.labels->workload_kind;
      if (profile.sampling) w.samples += s.values[kSamples];
      w.calls += s.values[kCalls];
    }
    RowBuilder& r = rows[{s.labels->callsite, s.labels->syscall}];
    r.row.samples += s.values[kSamples];
    r.row.calls += s.values[kCalls];
    r.row.bytes += s.values[kBytes];
    r.row.latency_ns += s.values[kLatencyNs];
    if (profile.sampling && s.values[kSamples] && !s.labels->check.empty()) {
      r.checks[s.labels->check] += s.values[kSamples];
    }
    if (!profile.sampling && s.values[kSubchecks] && !s.labels->check.empty()) {
      r.checks[s.labels->check] += s.values[kSubchecks];
    }
    if (top_stacks > 0 && s.values[rank_by] && s.stack) {
      std::vector<std::string_view> names;
      names.reserve(s.stack->size());
      for (const FramePtr& f : *s.stack) names.push_back(f->function);
      StackCost& sc = r.stacks[std::move(names)];
      if (!sc.stack) sc.stack = s.stack;
      sc.value += s.values[rank_by];
      if (has_source_lines(*s.stack)) {
        auto [known, fresh] = paths.try_emplace(s.stack.get());
        if (fresh) known->second = copy_path(*s.stack, kRules);
        if (!known->second.steps.empty()) {
          CopyCost& cc = r.copies[known->second.steps];
          if (cc.path.steps.empty()) cc.path = known->second;
          cc.value += s.values[rank_by];
        }
      }
    }
  }

  for (auto& [key, r] : rows) {
    CallsiteCost row = std::move(r.row);
    row.callsite = key.first;
    row.syscall = key.second;
    if (row.samples == 0 && row.calls == 0 && row.bytes == 0 && r.checks.empty()) continue;
    row.cpu_seconds = static_cast<double>(row.samples) * period_s;
    if (profile.sampling && cost.busy_samples() > 0) {
      row.share = static_cast<double>(row.samples) / static_cast<double>(cost.busy_samples());
    }
    row.checks = largest_first(r.checks);
    std::vector<StackCost> stacks;
    for (auto& [ptr, sc] : r.stacks) stacks.push_back(std::move(sc));
    std::stable_sort(stacks.begin(), stacks.end(),
                     [](const StackCost& a, const StackCost& b) { return a.value > b.value; });
    if (stacks.size() > top_stacks) stacks.resize(top_stacks);
    row.top_stacks = std::move(stacks);
    cost.check_samples += row.samples;
    row.copies = largest(r.copies, top_stacks);
    cost.calls += row.calls;
    cost.bytes += row.bytes;
    cost.latency_ns += row.latency_ns;
    cost.callsites.push_back(std::move(row));
  }
  cost.check_cpu_seconds = static_cast<double>(cost.check_samples) * period_s;
  cost.kernel_cpu_seconds = static_cast<double>(cost.kernel_samples) * period_s;
  cost.user_cpu_seconds = static_cast<double>(cost.user_samples) * period_s;
  cost.interrupt_cpu_seconds = static_cast<double>(cost.interrupt_samples) * period_s;
  cost.workloads =
      workload_rows(std::move(workloads), profile.busy_by_workload, period_s, !profile.sampling);
  std::stable_sort(cost.callsites.begin(), cost.callsites.end(),
                   [&](const CallsiteCost& a, const CallsiteCost& b) {
                     return profile.sampling
                                ? std::tie(a.samples, a.calls) > std::tie(b.samples, b.calls)
                                : std::tie(a.calls, a.bytes) > std::tie(b.calls, b.bytes);
                   });
  return cost;
}

}  // namespace hucprof
