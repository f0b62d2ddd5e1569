#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "core/kernel/run_mode.h"
#include "core/workload/record_target.h"

namespace hucprof {

// The copy helpers (normalized names) whose callers are the real call sites: the default folding
// rules' (core/symbols/folding_rules.h).
std::vector<std::string> default_copy_helpers();

// The user's choices that shape the attach plan. The flags write them here and the plan reads
// them here: `RunOptions::attach` is this very struct, so a flag reaches the plan in one hop.
struct AttachOptions {
  Mode mode = Mode::Auto;                                 // --mode
  ProbeAttach probe_attach = ProbeAttach::Auto;           // --probe.attach auto|fentry|kprobe
  bool latency = false;                                   // --latency: fexit/kretprobe timing
  SubcheckCounting subchecks = kDefaultSubcheckCounting;  // --probe.subchecks classify|attach
  // --bpf.max-keys, --bpf.max-stacks: what each BPF counter / stack map holds per drain interval.
  uint32_t max_keys = 16384;
  uint32_t max_stacks = 8192;
  // --probe.workloads: probe mode keys each check also by its task's cgroup v2 id.
  bool probe_workloads = false;
  // --probe.rescue auto|off: the rescue program where a run of the check's program can be
  // preempted (auto), or never (off: one program run per check, the skipped checks only counted).
  bool rescue = true;
  // --probe.objects: classified slab checks also counted by cache and usercopy region.
  bool objects = false;
  // Not a flag: what `record` follows (-- COMMAND, -p, -C, -G); both sessions count only these
  // tasks and CPUs. Everything for `run`.
  FollowFilter follow;
  // Not a flag: check samples carry their process's pid (`record`: bounded by its length, where a
  // daemon's would name every process the node ever ran).
  bool label_pids = false;
  // Not a flag: copy-helper symbols (normalized) whose callers are the real call sites.
  std::vector<std::string> helper_symbols = default_copy_helpers();
};

}  // namespace hucprof
