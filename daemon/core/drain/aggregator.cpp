#include "core/drain/aggregator.h"

#include <algorithm>
#include <set>
#include <tuple>
#include <utility>

#include "core/drain/latency_slots.h"
#include "core/drain/raw_drain.h"
#include "core/drain/top_k_ranking.h"

namespace hucprof {
namespace {

struct CallsAndBytes {
  uint64_t calls = 0, bytes = 0;
  CallsAndBytes& operator+=(const CallsAndBytes& more) {
    calls += more.calls;
    bytes += more.bytes;
    return *this;
  }
};

// Keys are label tuples with the call site first, so std::map order is the export order.
using CheckKey = std::tuple<std::string, std::string, std::string>;   // callsite, syscall, dir
using SubcheckKey = std::pair<std::string, std::string>;              // callsite, step
using SampleKey = std::tuple<std::string, std::string, std::string>;  // callsite, syscall, step
// callsite, kind, object, region
using ObjectKey = std::tuple<std::string, std::string, std::string, std::string>;
// callsite, syscall, direction, copy
using CopyCheckKey = std::tuple<std::string, std::string, std::string, std::string>;
using CopySampleKey = std::tuple<std::string, std::string, std::string>;  // callsite, syscall, copy
using WorkloadKey = std::pair<std::string, std::string>;                  // workload, kind

struct WorkloadSamples {
  uint64_t checks = 0, busy = 0;
  WorkloadSamples& operator+=(const WorkloadSamples& more) {
    checks += more.checks;
    busy += more.busy;
    return *this;
  }
};

// Whether a series is exported now: "other", or a label the family's ranking names. A series
// whose label left the top-K keeps its value here, unexported, and resumes from it if the label
// comes back; meanwhile its increments go to "other". Nothing is moved between series, so every
// series only grows and rate() over each of them, and sum(rate()) over all, stay exact, while a
// family never holds more than top_k + 1 series at a scrape.
bool exported(const TopKRanking& ranking, std::string_view label) {
  return label == kOtherCallsite || ranking.label(label) == label;
}

// A workload's series: its own while ranked, else "other" (which mixes kinds, so has none).
template <typename Value>
Value& workload_series(std::map<WorkloadKey, Value>& series, const TopKRanking& ranking,
                       const std::string& workload, const std::string& kind) {
  const std::string_view label = ranking.label(workload);
  return label == kOtherCallsite ? series[{std::string(label), ""}] : series[{workload, kind}];
}

// The histogram keeps only log2 buckets; approximate each call by its bucket's midpoint so
// that _sum stays monotonic and roughly right.
uint64_t approximate_sum_ns(const std::vector<uint64_t>& buckets) {
  uint64_t sum = 0;
  for (size_t i = 0; i < buckets.size(); ++i) sum += buckets[i] * latency_slot_midpoint_ns(i);
  return sum;
}

bool all_zero(const std::vector<uint64_t>& v) {
  return std::all_of(v.begin(), v.end(), [](uint64_t x) { return x == 0; });
}

}  // namespace

struct Aggregator::Impl {
  explicit Impl(size_t top_k)
      : by_calls(top_k),
        by_samples(top_k),
        by_workload(top_k),
        by_workload_calls(top_k),
        top_k(top_k) {}

  TopKRanking& object_ranking(const std::string& callsite) {
    return objects_by_callsite.try_emplace(callsite, top_k).first->second;
  }
  // Whether an object label of a call site label is exported now.
  bool object_exported(std::string_view callsite, std::string_view object) const {
    if (object == kOtherCallsite || object == kUnknownObject) return true;
    auto ranking = objects_by_callsite.find(callsite);
    return ranking != objects_by_callsite.end() && ranking->second.label(object) == object;
  }

  TopKRanking by_calls;           // checks, bytes, subchecks, latency
  TopKRanking by_samples;         // cpu samples
  TopKRanking by_workload;        // workloads, by their samples in the checks
  TopKRanking by_workload_calls;  // workloads, by their checks (probes)
  std::map<WorkloadKey, WorkloadSamples> workloads;
  std::map<WorkloadKey, CallsAndBytes> workload_checks;
  std::map<CheckKey, CallsAndBytes> checks;
  std::map<SubcheckKey, uint64_t> subchecks;
  std::map<ObjectKey, uint64_t> objects;
  // Per call site label: which identified objects (slab caches) it exports by name, its top-K by
  // checks; the rest as object="other".
  std::map<std::string, TopKRanking, std::less<>> objects_by_callsite;
  size_t top_k;
  std::map<SampleKey, uint64_t> samples;
  uint64_t check_samples = 0;  // all of samples' counts, exported or not
  std::map<std::string, std::vector<uint64_t>> latency;
  std::map<std::string, uint64_t> sampled_by_context;
  std::map<std::string, uint64_t> excluded_samples;
  std::map<std::string, uint64_t> drops;
  std::map<std::string, uint64_t> helper_walks;
  MissedCounts missed;
  MissedCoverages missed_coverage;  // the last drain's
  std::optional<uint64_t> rescued_checks;
  uint64_t intervals = 0;
  std::map<CopyCheckKey, uint64_t> copy_checks;
  std::map<CopySampleKey, uint64_t> copy_samples;
  std::map<std::string, std::set<std::string>> copies;  // call site label → copies by name

  // The copy label of a series: named while the call site has room, else "other".
  std::string copy_label(const std::string& callsite, const std::string& copy) {
    std::set<std::string>& named = copies[callsite];
    if (named.contains(copy)) return copy;
    if (named.size() >= kMaxCopiesPerCallsite) return "other";
    named.insert(copy);
    return copy;
  }
};

Aggregator::Aggregator(size_t top_k) : impl_(std::make_shared<Impl>(top_k)) {}

void Aggregator::set_top_k(size_t top_k) {
  impl_->by_calls.set_top_k(top_k);
  impl_->by_samples.set_top_k(top_k);
  impl_->by_workload.set_top_k(top_k);
  impl_->by_workload_calls.set_top_k(top_k);
  impl_->top_k = top_k;
  for (auto& [callsite, ranking] : impl_->objects_by_callsite) ranking.set_top_k(top_k);
}

void Aggregator::apply_workloads(const IntervalDeltas& deltas) {
  Impl& s = *impl_;
  for (const SampleDelta& d : deltas.samples) {
    if (!d.workload.empty()) s.by_workload.add(d.workload, d.samples);
  }
  for (const auto& [workload, busy] : deltas.busy_by_workload) s.by_workload.add(workload, 0);
  s.by_workload.rerank();
  for (const SampleDelta& d : deltas.samples) {
    if (!d.workload.empty() && d.samples) {
      workload_series(s.workloads, s.by_workload, d.workload, d.workload_kind).checks += d.samples;
    }
  }
  for (const auto& [workload, busy] : deltas.busy_by_workload) {
    if (busy.busy())
      workload_series(s.workloads, s.by_workload, workload, busy.kind).busy += busy.busy();
  }
}

void Aggregator::apply_workload_checks(const IntervalDeltas& deltas) {
  Impl& s = *impl_;
  for (const CheckDelta& d : deltas.checks) {
    if (!d.workload.empty()) s.by_workload_calls.add(d.workload, d.calls);
  }
  s.by_workload_calls.rerank();
  for (const CheckDelta& d : deltas.checks) {
    if (d.workload.empty() || (d.calls == 0 && d.bytes == 0)) continue;
    workload_series(s.workload_checks, s.by_workload_calls, d.workload, d.workload_kind) +=
        CallsAndBytes{d.calls, d.bytes};
  }
}

void Aggregator::apply(const IntervalDeltas& deltas) {
  Impl& s = *impl_;

  // Rank with this interval included, so a new hot call site is named from its first interval.
  for (const CheckDelta& d : deltas.checks) s.by_calls.add(d.callsite, d.calls);
  for (const SubcheckDelta& d : deltas.subchecks) s.by_calls.add(d.callsite, 0);
  for (const ObjectDelta& d : deltas.objects) s.by_calls.add(d.callsite, 0);
  for (const LatencyDelta& d : deltas.latency) s.by_calls.add(d.callsite, 0);
  for (const SampleDelta& d : deltas.samples) s.by_samples.add(d.callsite, d.samples);
  s.by_calls.rerank();
  s.by_samples.rerank();

  // Route only this interval's increments: a named series never takes over what "other" got
  // earlier, and a series that drops out keeps its value, so every series is monotonic.
  for (const CheckDelta& d : deltas.checks) {
    if (d.calls == 0 && d.bytes == 0) continue;
    CallsAndBytes& v =
        s.checks[{std::string(s.by_calls.label(d.callsite)), d.syscall, d.direction}];
    v.calls += d.calls;
    v.bytes += d.bytes;
  }
  for (const SubcheckDelta& d : deltas.subchecks) {
    if (d.count == 0) continue;
    s.subchecks[{std::string(s.by_calls.label(d.callsite)), d.step}] += d.count;
  }
  // Objects are ranked within their call site's label, as call sites are among themselves; the
  // unidentified ones ("[unknown]") are one series per kind, never ranked out.
  std::set<std::string> reranked;
  for (const ObjectDelta& d : deltas.objects) {
    if (d.count == 0 || d.object == kUnknownObject) continue;
    const std::string callsite(s.by_calls.label(d.callsite));
    s.object_ranking(callsite).add(d.object, d.count);
    reranked.insert(callsite);
  }
  for (const std::string& callsite : reranked) s.object_ranking(callsite).rerank();
  for (const ObjectDelta& d : deltas.objects) {
    if (d.count == 0) continue;
    const std::string callsite(s.by_calls.label(d.callsite));
    const std::string object = d.object == kUnknownObject
                                   ? d.object
                                   : std::string(s.object_ranking(callsite).label(d.object));
    s.objects[{callsite, d.object_kind, object, d.region}] += d.count;
  }
  for (const LatencyDelta& d : deltas.latency) {
    if (all_zero(d.bucket_counts)) continue;
    std::vector<uint64_t>& buckets = s.latency[std::string(s.by_calls.label(d.callsite))];
    if (buckets.size() < d.bucket_counts.size()) buckets.resize(d.bucket_counts.size());
    for (size_t i = 0; i < d.bucket_counts.size(); ++i) buckets[i] += d.bucket_counts[i];
  }
  for (const SampleDelta& d : deltas.samples) {
    if (d.samples == 0) continue;
    s.samples[{std::string(s.by_samples.label(d.callsite)), d.syscall, d.step}] += d.samples;
    s.check_samples += d.samples;
  }
  // After the families they split: a call site is ranked (and labelled) there first.
  for (const CopyDelta& d : deltas.copies) {
    if (d.calls) {
      const std::string callsite(s.by_calls.label(d.callsite));
      s.copy_checks[{callsite, d.syscall, d.direction, s.copy_label(callsite, d.copy)}] += d.calls;
    }
    if (d.samples) {
      const std::string callsite(s.by_samples.label(d.callsite));
      s.copy_samples[{callsite, d.syscall, s.copy_label(callsite, d.copy)}] += d.samples;
    }
  }

  apply_workloads(deltas);
  apply_workload_checks(deltas);

  // Not per call site: no ranking. Zero deltas still create the entry so that a drop reason
  // exports 0 from the start instead of appearing only once something was lost.
  for (const auto& [context, n] : deltas.sampled_by_context) s.sampled_by_context[context] += n;
  for (const auto& [reason, n] : deltas.excluded_samples) s.excluded_samples[reason] += n;
  for (const auto& [reason, n] : deltas.drops) s.drops[reason] += n;
  for (const auto& [walk, n] : deltas.helper_walks) s.helper_walks[walk] += n;
  for (const auto& [key, n] : deltas.missed) s.missed[key] += n;
  s.missed_coverage = deltas.missed_coverage;
  if (deltas.rescued_checks) {
    s.rescued_checks = s.rescued_checks.value_or(0) + *deltas.rescued_checks;
  }
  ++s.intervals;
}

void Aggregator::fill(hucprof::v1::Snapshot& snapshot) const {
  const Impl& s = *impl_;
  snapshot.clear_checks();
  snapshot.clear_subchecks();
  snapshot.clear_object_checks();
  snapshot.clear_cpu_samples();
  snapshot.clear_sampled();
  snapshot.clear_excluded();
  snapshot.clear_latency();
  snapshot.clear_drops();
  snapshot.clear_helper_walks();
  snapshot.clear_missed();
  snapshot.clear_missed_coverage();
  snapshot.clear_copy_checks();
  snapshot.clear_copy_cpu_samples();
  snapshot.clear_workloads();
  snapshot.clear_workload_checks();

  for (const auto& [key, v] : s.checks) {
    if (!exported(s.by_calls, std::get<0>(key))) continue;
    auto* out = snapshot.add_checks();
    out->set_callsite(std::get<0>(key));
    out->set_syscall(std::get<1>(key));
    out->set_direction(std::get<2>(key));
    out->set_calls(v.calls);
    out->set_bytes(v.bytes);
  }
  for (const auto& [key, count] : s.subchecks) {
    if (!exported(s.by_calls, key.first)) continue;
    auto* out = snapshot.add_subchecks();
    out->set_callsite(key.first);
    out->set_step(key.second);
    out->set_count(count);
  }
  for (const auto& [key, count] : s.objects) {
    if (!exported(s.by_calls, std::get<0>(key))) continue;
    if (!s.object_exported(std::get<0>(key), std::get<2>(key))) continue;
    auto* out = snapshot.add_object_checks();
    out->set_callsite(std::get<0>(key));
    out->set_object_kind(std::get<1>(key));
    out->set_object(std::get<2>(key));
    out->set_region(std::get<3>(key));
    out->set_count(count);
  }
  for (const auto& [key, n] : s.samples) {
    if (!exported(s.by_samples, std::get<0>(key))) continue;
    auto* out = snapshot.add_cpu_samples();
    out->set_callsite(std::get<0>(key));
    out->set_syscall(std::get<1>(key));
    out->set_step(std::get<2>(key));
    out->set_samples(n);
  }
  for (const auto& [context, n] : s.sampled_by_context) {
    auto* out = snapshot.add_sampled();
    out->set_context(context);
    out->set_samples(n);
  }
  for (const auto& [reason, n] : s.excluded_samples) {
    auto* out = snapshot.add_excluded();
    out->set_reason(reason);
    out->set_samples(n);
  }
  for (const auto& [callsite, buckets] : s.latency) {
    if (!exported(s.by_calls, callsite)) continue;
    auto* out = snapshot.add_latency();
    out->set_callsite(callsite);
    for (uint64_t b : buckets) out->add_bucket_counts(b);
    out->set_sum_ns(approximate_sum_ns(buckets));
  }
  for (const auto& [reason, n] : s.drops) {
    auto* out = snapshot.add_drops();
    out->set_reason(reason);
    out->set_count(n);
  }
  for (const auto& [walk, n] : s.helper_walks) {
    auto* out = snapshot.add_helper_walks();
    out->set_walk(walk);
    out->set_count(n);
  }
  for (const auto& [key, n] : s.missed) {
    auto* out = snapshot.add_missed();
    out->set_what(key.first);
    out->set_reason(key.second);
    out->set_count(n);
  }
  if (s.rescued_checks) {
    snapshot.set_rescued_checks(*s.rescued_checks);
  } else {
    snapshot.clear_rescued_checks();
  }
  for (const auto& [what, coverage] : s.missed_coverage) {
    auto* out = snapshot.add_missed_coverage();
    out->set_what(what);
    out->set_counted(coverage.counted);
    out->set_uncounted(coverage.uncounted);
  }
  for (const auto& [key, calls] : s.copy_checks) {
    if (!exported(s.by_calls, std::get<0>(key))) continue;
    auto* out = snapshot.add_copy_checks();
    out->set_callsite(std::get<0>(key));
    out->set_syscall(std::get<1>(key));
    out->set_direction(std::get<2>(key));
    out->set_copy(std::get<3>(key));
    out->set_calls(calls);
  }
  for (const auto& [key, n] : s.copy_samples) {
    if (!exported(s.by_samples, std::get<0>(key))) continue;
    auto* out = snapshot.add_copy_cpu_samples();
    out->set_callsite(std::get<0>(key));
    out->set_syscall(std::get<1>(key));
    out->set_copy(std::get<2>(key));
    out->set_samples(n);
  }
  for (const auto& [key, n] : s.workloads) {
    if (!exported(s.by_workload, key.first)) continue;
    auto* out = snapshot.add_workloads();
    out->set_workload(key.first);
    out->set_workload_kind(key.second);
    out->set_check_samples(n.checks);
    out->set_busy_samples(n.busy);
  }
  for (const auto& [key, v] : s.workload_checks) {
    if (!exported(s.by_workload_calls, key.first)) continue;
    auto* out = snapshot.add_workload_checks();
    out->set_workload(key.first);
    out->set_workload_kind(key.second);
    out->set_calls(v.calls);
    out->set_bytes(v.bytes);
  }
  snapshot.set_intervals(s.intervals);
  snapshot.set_check_samples(s.check_samples);
}

CostTotals Aggregator::cost_totals() const {
  const Impl& s = *impl_;
  CostTotals out;
  for (const auto& [key, n] : s.samples) {
    const std::string& callsite = std::get<0>(key);
    out.check_samples.by_callsite[callsite] += n;
    if (exported(s.by_samples, callsite)) out.check_samples.exported.insert(callsite);
  }
  for (const auto& [context, n] : s.sampled_by_context) {
    if (context != "idle") out.busy_samples += n;
  }
  for (const auto& [callsite, buckets] : s.latency) {
    out.check_ns.by_callsite[callsite] = approximate_sum_ns(buckets);
    if (exported(s.by_calls, callsite)) out.check_ns.exported.insert(callsite);
  }
  return out;
}

}  // namespace hucprof
