#pragma once
#include <cstdint>

namespace hucprof {

// One bit per capability number (CAP_SYSLOG = 34 → bit 34), as in /proc/PID/status.
using CapabilityMask = uint64_t;

inline constexpr CapabilityMask capability_bit(int cap) { return CapabilityMask{1} << cap; }

// --capabilities.keep: what `hucprof run` keeps once everything is attached.
struct CapabilityKeep {
  bool all = false;         // "all": keep every capability held at start
  CapabilityMask caps = 0;  // otherwise these ("none": 0)
};

// The default, and why: after attaching, the daemon only reads BPF maps through file
// descriptors it already holds (no capability needed since Linux 5.19, even with
// kernel.unprivileged_bpf_disabled; before, see with_map_access), serves HTTP on a socket bound
// already, and re-reads /proc/kallsyms when a module brings new code — which shows addresses only
// with CAP_SYSLOG (kptr_restrict). Nothing is attached at run time, so CAP_BPF and CAP_PERFMON go.
CapabilityKeep default_capability_keep();

// `keep` plus the capability that lets bpf() read the maps, for kernels that refuse every bpf()
// command without it while kernel.unprivileged_bpf_disabled is set (Debian's 5.10): CAP_BPF
// where it is held, else CAP_SYS_ADMIN (the kernel accepts either). "all" stays "all".
CapabilityKeep with_map_access(const CapabilityKeep& keep, CapabilityMask permitted);

// A thread's capability sets.
struct CapabilitySets {
  CapabilityMask effective = 0, permitted = 0, inheritable = 0, bounding = 0, ambient = 0;
};

// What to do to the capability sets after attaching, decided once from what the process holds.
struct PrivilegePlan {
  // --capabilities.keep=all: no capability set changes, only no_new_privs.
  bool unchanged = false;
  // Effective and permitted afterwards; inheritable and ambient become empty (hucprof never
  // executes anything).
  CapabilityMask keep = 0;
  // Removed from the bounding set first (needs CAP_SETPCAP, which goes right after).
  CapabilityMask bounding_drop = 0;
  // Would leave the bounding set but cannot without CAP_SETPCAP (e.g. under systemd, whose
  // CapabilityBoundingSet= already limits it); no_new_privs keeps them out of reach anyway.
  CapabilityMask bounding_stuck = 0;
  // Asked for by --capabilities.keep but not held at start: nothing to keep.
  CapabilityMask missing = 0;
};

// The web server's socket is bound before the drop, so a port below 1024 needs nothing kept.
PrivilegePlan plan_privileges(const CapabilitySets& now, const CapabilityKeep& keep);

}  // namespace hucprof
