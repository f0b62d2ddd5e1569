#pragma once
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "core/drain/cost_totals.h"
#include "core/drain/missed_runs.h"
#include "core/symbols/stack_profile.h"
#include "hucprof.pb.h"

namespace hucprof {

// What one drain interval observed, already symbolized and folded. Deltas, not totals.
struct CheckDelta {
  std::string callsite, syscall, direction;  // direction: "to_user" | "from_user"
  uint64_t calls = 0, bytes = 0;
  std::string workload = {}, workload_kind = {};  // "" unless keyed by cgroup (--probe.workloads)
};
struct SubcheckDelta {
  std::string callsite, step;
  uint64_t count = 0;
};
// Classified checks by the kind of object copied (probe mode) and its identity.
struct ObjectDelta {
  std::string callsite, object_kind, object;  // object: a slab cache's name, or kUnknownObject
  uint64_t count = 0;
  std::string region;  // slab: inside/outside the cache's usercopy region; else "none"
};
// The step of time in __check_object_size's own code, and in what is inlined into it.
inline constexpr const char* kEntryStep = "entry";
struct SampleDelta {
  std::string callsite, syscall, step;
  uint64_t samples = 0;
  std::string workload = {}, workload_kind = {};  // "" where the samples carry no cgroup
};
// A call site's checks (probe mode) or samples (sampling) by the copy function they came
// through: the kernel's debuginfo only. It may come drains after the CheckDelta or SampleDelta it
// splits, once the lines that name the copy were looked up.
struct CopyDelta {
  std::string callsite, syscall, direction;  // direction: checks only
  std::string copy;
  uint64_t calls = 0, samples = 0;
};
struct LatencyDelta {
  std::string callsite;
  std::vector<uint64_t> bucket_counts;  // index = floor(log2(ns))
};
struct IntervalDeltas {
  std::vector<CheckDelta> checks;
  std::vector<SubcheckDelta> subchecks;
  std::vector<ObjectDelta> objects;
  std::vector<SampleDelta> samples;
  std::vector<LatencyDelta> latency;
  std::vector<CopyDelta> copies;
  std::map<std::string, uint64_t> sampled_by_context;  // "kernel" | "user" | "idle"
  // Samples with a check on the stack that are not its cost, by reason ("interrupt"); they are
  // in sampled_by_context["kernel"] too.
  std::map<std::string, uint64_t> excluded_samples;
  // The busy samples above split by workload (sampling, with workloads named).
  BusyByWorkload busy_by_workload;
  std::map<std::string, uint64_t> drops;         // reason → count
  std::map<std::string, uint64_t> helper_walks;  // huc_helper_walk name → count (probes)
  // Program runs the kernel skipped (core/drain/missed_runs.h), for what the kernel counts, and
  // whether it counts them for each kind of program loaded.
  MissedCounts missed;
  MissedCoverages missed_coverage;
  // Checks the kernel skipped the check's program for that the rescue program counted (they
  // are in `checks`, not in `missed`).
  std::optional<uint64_t> rescued_checks;  // unset without a rescue program
  // The same events by full stack, for profiles (the aggregator leaves them to the ProfileStore).
  std::vector<ProfileSample> stacks;
};

// Accumulates interval deltas into cumulative, cardinality-bounded series.
//
// Top-K: per family (checks+bytes+subchecks+objects+latency ranked by calls; cpu samples ranked by
// samples; workloads ranked by their samples in the checks, or their checks) at most top_k labels
// are exported by name at any fill(), chosen by cumulative cost; the rest is summed into "other"
// (callsite="other", workload="other"). A label's series counts only what came while it was
// named: one leaving the top-K is no longer exported (it keeps its value, unexported, and resumes
// from it if it comes back), and its later increments go to "other". Nothing ever moves between
// series, so every exported series only grows, and rate() over each and sum(rate()) over all stay
// exact, whatever the churn; the plain sum of the exported values is not the total since start
// (what left is not in it).
//
// The copy families (debuginfo only) take the call site label of the family they split (calls or
// samples), and at most kMaxCopiesPerCallsite copy functions per call site label by name (the
// first seen), the rest as copy="other": a call site reaches its checks through a handful of
// copies, and that stays bounded whatever the kernel does.
class Aggregator {
 public:
  explicit Aggregator(size_t top_k);

  void apply(const IntervalDeltas& deltas);
  // A new top-K from the next apply() on (SIGHUP). Lowering it stops exporting the surplus
  // labels, as if they had left the top-K.
  void set_top_k(size_t top_k);
  // Fills the counter parts of the snapshot (checks, subchecks, cpu_samples, sampled, latency,
  // drops, intervals); leaves status fields (probes, build, hardened) to the caller.
  void fill(hucprof::v1::Snapshot& snapshot) const;
  // The cost counters since start by call site label, exported or not, and the labels fill()
  // exports now: what the speed-up prediction windows.
  CostTotals cost_totals() const;

  static constexpr size_t kMaxCopiesPerCallsite = 8;

 private:
  // The workload families: ranked by the checks' samples, the busy samples under the same
  // names, so that a workload's share is the quotient of two of its series. Top-K as above.
  void apply_workloads(const IntervalDeltas& deltas);
  // Probe mode's checks by workload (--probe.workloads), ranked by their calls likewise.
  void apply_workload_checks(const IntervalDeltas& deltas);

  struct Impl;
  std::shared_ptr<Impl> impl_;
};

}  // namespace hucprof
