#pragma once
#include <array>
#include <compare>
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <tuple>
#include <vector>

#include "core/symbols/source_lines.h"

namespace hucprof {

// One kernel frame of a profile, symbolized once when its stack was first seen. Never a raw
// address (KASLR): the function, the offset into it and the offset from _stext.
struct ProfileFrame {
  std::string function;      // exact kallsyms name, compiler suffixes kept (".part.0")
  std::string module;        // "" for vmlinux
  uint64_t offset = 0;       // from the function's start
  uint64_t text_offset = 0;  // from _stext, vmlinux only; 0 in modules and when unknown
  // From the kernel's debuginfo, when hucprof has it: the functions inlined at this address and
  // the source lines (core/symbols/source_lines.h). Null without debuginfo.
  SourceLinesPtr source = nullptr;

  friend std::strong_ordering operator<=>(const ProfileFrame& a, const ProfileFrame& b) {
    if (auto c = std::tie(a.function, a.module, a.offset, a.text_offset) <=>
                 std::tie(b.function, b.module, b.offset, b.text_offset);
        c != 0) {
      return c;
    }
    return compare_source(a.source, b.source);
  }
  friend bool operator==(const ProfileFrame& a, const ProfileFrame& b) { return (a <=> b) == 0; }
};
// Frames and stacks are interned (StackInterner): equal pointers are equal stacks, copies of a
// profile share them, and nothing a profile points to ever changes.
using FramePtr = std::shared_ptr<const ProfileFrame>;
using ProfileStack = std::vector<FramePtr>;  // leaf first
using StackPtr = std::shared_ptr<const ProfileStack>;

// The labels of the metric contract, carried by every sample as pprof labels.
struct ProfileLabels {
  std::string callsite;
  std::string syscall;
  std::string check;  // sampling: innermost check kind; probe: the sub-check of a sub-check sample
  std::string direction;  // probe: "to_user" | "from_user"
  // The copy function the check was reached through (core/symbols/copy_path.h), with the kernel's
  // debuginfo only; "" without it.
  std::string copy = {};
  // The workload the task belongs to (its cgroup named by core/workload/workload_rules.h) and its
  // kind
  // ("unit", "container", "pod", "cgroup"); "" where the samples carry no cgroup.
  std::string workload = {};
  std::string workload_kind = {};
  // The command (task comm) that ran the copy, where the profile records it; "" elsewhere
  // (probe mode, older profiles). Bounded: core/symbols/task_labels.h.
  std::string comm = {};
  // The process (tgid) that ran it, in recordings; 0 elsewhere. A numeric pprof label.
  int64_t pid = 0;

  auto operator<=>(const ProfileLabels&) const = default;
};
// The workload label of samples whose workload the profile store no longer names one by one
// (ProfileStore: folded, with their busy CPU).
inline constexpr std::string_view kFoldedWorkload = "[other workloads]";

// Interned like stacks (StackInterner::labels): samples of a store compare labels by pointer.
using LabelsPtr = std::shared_ptr<const ProfileLabels>;
inline LabelsPtr make_labels(ProfileLabels labels) {
  return std::make_shared<const ProfileLabels>(std::move(labels));
}

// What a sample counts; one pprof sample type each (CPU nanoseconds are samples x period).
enum ProfileValue : size_t {
  kSamples = 0,    // sampling: cpu-clock samples with this stack
  kCalls = 1,      // probe: __check_object_size calls
  kBytes = 2,      // probe: bytes those calls checked
  kLatencyNs = 3,  // probe --latency: time inside the calls (log2-bucket midpoints)
  kSubchecks = 4,  // probe: sub-check runs (the sub-check's function is the leaf frame)
  kProfileValueCount = 5,
};
using ProfileValues = std::array<uint64_t, kProfileValueCount>;

struct ProfileSample {
  StackPtr stack;
  LabelsPtr labels;  // never null
  ProfileValues values{};
};

// One workload's part of the denominator: its busy cpu-clock samples, and of its kernel ones
// those an interrupt took from a check (in kernel too).
struct WorkloadBusy {
  std::string kind;  // as ProfileLabels::workload_kind
  uint64_t kernel = 0, user = 0, interrupts = 0;
  // In a ProfileStore's profiles, which time the store named this workload: one it folded and
  // saw again is named anew, and difference() must not take the new counts for the old ones.
  // 0 elsewhere.
  uint64_t named = 0;

  uint64_t busy() const { return kernel + user; }
  WorkloadBusy& operator+=(const WorkloadBusy& more);
  WorkloadBusy& operator-=(const WorkloadBusy& less);  // saturating at 0
};
// By workload name (ProfileLabels::workload).
using BusyByWorkload = std::map<std::string, WorkloadBusy>;
void add_busy(BusyByWorkload& to, const BusyByWorkload& more);

// A profile as every hucprof output sees it (pprof file, report, flame graph, web view), and what
// the pprof reader gives back. Plain data.
struct StackProfile {
  std::vector<ProfileSample> samples;
  bool sampling = false;  // kSamples are meaningful (and sample_period_ns is set)
  bool probes = false;    // kCalls, kBytes, kSubchecks are meaningful
  bool latency = false;   // kLatencyNs is meaningful
  uint64_t sample_period_ns = 0;
  // The denominator: every cpu-clock sample by context ("kernel", "user", "idle").
  std::map<std::string, uint64_t> sampled_by_context;
  // Kernel samples with a check on the stack that are not its cost, by reason ("interrupt").
  std::map<std::string, uint64_t> excluded_samples;
  // The busy part of sampled_by_context split by workload (sampling). It sums to that part but
  // for the samples whose cgroup the kernel could not count (hucprof_dropped_total
  // {reason="busy_map_full"}).
  BusyByWorkload busy_by_workload;
  // Probe mode: checks the kernel ran while the check's program was busy on their CPU, which it
  // skipped and only counted (core/drain/missed_runs.h), by the kernel's counter ("recursion",
  // "kprobe_missed"); in no sample. Empty where the kernel counts none: then
  // missed_checks_uncounted says why ("" without probes).
  std::map<std::string, uint64_t> missed_checks;
  std::string missed_checks_uncounted;
  // Sampling: cpu-clock samples the CPU's clock owed the sampler program and the kernel skipped
  // it for (core/drain/skipped_samples.h), in no sample and no denominator. Unset where they are
  // not counted (probe mode, a count hucprof could not read, files of older versions), so a 0 is a
  // count and never a guess.
  std::optional<uint64_t> skipped_samples;
  int64_t time_unix_ns = 0;  // start of the window
  int64_t duration_ns = 0;
  std::string kernel;  // release, e.g. "6.1.0-18-amd64"
  std::string hucprof_version;
  std::string hardened_usercopy;  // "on" / "off" and why, in words
  // Whose CPU busy CPU is (`record` -p/-C/-G/-- COMMAND, core/workload/record_target.h), in words:
  // "PID 1234", "`make` and its children"; "" for the daemon's profiles (the whole node).
  std::string target;
};

// later - earlier, sample by sample (same stack and labels, compared as pointers) and for the
// denominator, for two cumulative profiles of the same store; the window runs from earlier's
// end to later's end. A sample or workload of earlier that later lacks was folded by the store
// in between: it is taken from later's sample of the same stack and labels, and from its busy
// CPU, under kFoldedWorkload, kFoldedComm (core/task_labels.h) or both.
StackProfile difference(const StackProfile& later, const StackProfile& earlier);

}  // namespace hucprof
