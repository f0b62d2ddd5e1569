#pragma once
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "core/symbols/copy_path.h"
#include "core/symbols/stack_profile.h"

namespace hucprof {

// The numbers a person decides on, computed once from a profile (a recorded file, or the web
// view's last interval): how much CPU the hardened-usercopy checks cost, where, and through
// which stacks. Rendering (report table, web page, verdict sentence) only formats these.

struct StackCost {
  StackPtr stack;      // one of the stacks with these function names (offsets may differ)
  uint64_t value = 0;  // in the summary's ranking unit (samples or calls)
};

// One copy path into a call site's checks (the kernel's debuginfo only).
struct CopyCost {
  CopyPath path;
  uint64_t value = 0;  // in the summary's ranking unit
};

// One call site as reached from one syscall: a row of the report.
struct CallsiteCost {
  std::string callsite;
  std::string syscall;
  uint64_t samples = 0;
  double cpu_seconds = 0;
  std::optional<double> share;  // of busy CPU (kernel + user), the headline's denominator
  uint64_t calls = 0, bytes = 0;
  uint64_t latency_ns = 0;
  // Which check ran: sampling, CPU samples by innermost check kind; probes, sub-check runs by
  // kind. Largest first.
  std::vector<std::pair<std::string, uint64_t>> checks;
  std::vector<StackCost> top_stacks;  // largest first
  // With the kernel's debuginfo: the copy paths the checks came through, largest first (as
  // many as top_stacks).
  std::vector<CopyCost> copies;
};

// One workload's part of the checks: of their CPU where the samples name their workload
// (sampling), else of their calls (probe mode with --probe.workloads).
struct WorkloadCost {
  std::string workload, kind;
  uint64_t samples = 0;       // in the checks
  uint64_t busy_samples = 0;  // all its busy CPU (kernel + user), the checks included
  uint64_t calls = 0;         // checks counted by probes
  double cpu_seconds = 0;
  // Of every workload's samples in the checks (sampling), else of their calls.
  double share_of_checks = 0;
  std::optional<double> share_of_busy;  // of its own busy CPU: what the checks cost it
};

struct UsercopyCost {
  bool sampling = false;
  bool probes = false;
  bool latency = false;
  double window_seconds = 0;
  // Sampled CPU, summed over CPUs: inside the checks; busy kernel (context "kernel", not idle,
  // the checks included); user (context "user"). Samples and the same in seconds.
  uint64_t check_samples = 0, kernel_samples = 0, user_samples = 0;
  double check_cpu_seconds = 0, kernel_cpu_seconds = 0, user_cpu_seconds = 0;
  // Kernel samples with a check on the stack that are not its cost: an interrupt ran on top of
  // it (counted so at the source, or found so here in a profile that was not).
  uint64_t interrupt_samples = 0;
  double interrupt_cpu_seconds = 0;
  uint64_t calls = 0, bytes = 0, latency_ns = 0;
  std::vector<CallsiteCost> callsites;  // costliest first (CPU time, else calls)
  std::vector<WorkloadCost> workloads;  // costliest first; empty without workload labels

  uint64_t busy_samples() const { return kernel_samples + user_samples; }
  // The headline, the same number in every view (README "What would hardened_usercopy=off
  // save?"): the share of busy CPU (kernel + user, idle excluded) inside the checks, and the
  // speed-up of CPU-bound work with the checks gone, 1 / (1 - share), as the daemon's
  // usercopy_checks_busy_cpu_ratio and usercopy_checks_off_speedup_ratio. Unset where the profile
  // cannot say (no sampling, no busy CPU).
  std::optional<double> share_of_busy() const;
  std::optional<double> speedup_with_checks_off() const;
  // Secondary figures: the share of busy kernel CPU, and how many cores the checks take on
  // average over the window (unset without a duration).
  std::optional<double> share_of_kernel() const;
  std::optional<double> cores() const;
};

// top_stacks: how many stacks to keep per call site row (0: none, and no time spent on them).
UsercopyCost summarize_cost(const StackProfile& profile, size_t top_stacks = 3);

}  // namespace hucprof
