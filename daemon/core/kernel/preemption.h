#pragma once
#include <optional>
#include <string>
#include <string_view>

namespace hucprof {

// How the running kernel preempts kernel code, and whether that can switch a run of a BPF
// trampoline program out mid-run. The trampoline runs a program under rcu_read_lock() and
// migrate_disable() only, so the run is preemptible wherever RCU read sections are
// (CONFIG_PREEMPT_RCU) and the model preempts kernel code: full, lazy (a fair task at the next
// tick) and PREEMPT_RT; none and voluntary do not. While such a run is switched out it still
// holds its program's per-CPU guard, and the kernel skips the program for every other task's
// entry on that CPU (docs/design.md, "Checks the program never saw").
struct Preemption {
  std::string model;                  // "none", "voluntary", "full", "lazy", "rt" or "unknown"
  bool programs_preemptible = false;  // unknown counts as preemptible
  std::string reason;                 // where the model was read from, in words
};

// From what the kernel says: sched_preempt is /sys/kernel/debug/sched/preempt ("none voluntary
// (full) lazy": the model in force in parentheses, PREEMPT_DYNAMIC kernels with debugfs), else
// the `preempt=` boot parameter of a PREEMPT_DYNAMIC kernel, else the config's build choice.
Preemption evaluate_preemption(std::optional<std::string_view> config, std::string_view cmdline,
                               std::optional<std::string_view> sched_preempt);

}  // namespace hucprof
