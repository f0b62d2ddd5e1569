#include "app/privileges.h"

#include <sys/capability.h>
#include <sys/prctl.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <memory>
#include <system_error>

#include <spdlog/spdlog.h>

#include "cli/capability_names.h"
#include "core/base/message_text.h"
#include "kernel_edge/map_access_probe.h"

namespace hucprof {
namespace {

struct CapFree {
  void operator()(cap_t caps) const { cap_free(caps); }
};
using CapPtr = std::unique_ptr<std::remove_pointer_t<cap_t>, CapFree>;

int capabilities_known() {
  // The running kernel's count, which may exceed what libcap was built with.
  const int bits = static_cast<int>(cap_max_bits());
  return bits > 64 ? 64 : bits;
}

// Names while they fit in a log line, else how many.
std::string names_or_count(CapabilityMask mask) {
  const int count = __builtin_popcountll(mask);
  return count <= 4 ? capability_names(mask) : std::to_string(count) + " capabilities";
}

size_t thread_count() {
  std::error_code ec;
  size_t n = 0;
  for (std::filesystem::directory_iterator it("/proc/self/task", ec), end; !ec && it != end;
       it.increment(ec)) {
    ++n;
  }
  return n;
}

}  // namespace

CapabilitySets read_capability_sets() {
  CapabilitySets sets;
  const CapPtr caps(cap_get_proc());
  for (int cap = 0; cap < capabilities_known(); ++cap) {
    const auto value = static_cast<cap_value_t>(cap);
    cap_flag_value_t flag = CAP_CLEAR;
    if (caps && cap_get_flag(caps.get(), value, CAP_EFFECTIVE, &flag) == 0 && flag == CAP_SET) {
      sets.effective |= capability_bit(cap);
    }
    if (caps && cap_get_flag(caps.get(), value, CAP_PERMITTED, &flag) == 0 && flag == CAP_SET) {
      sets.permitted |= capability_bit(cap);
    }
    if (caps && cap_get_flag(caps.get(), value, CAP_INHERITABLE, &flag) == 0 && flag == CAP_SET) {
      sets.inheritable |= capability_bit(cap);
    }
    if (cap_get_bound(value) == 1) sets.bounding |= capability_bit(cap);
    if (cap_get_ambient(value) == 1) sets.ambient |= capability_bit(cap);
  }
  return sets;
}

std::string drop_privileges(const PrivilegePlan& plan) {
  if (plan.unchanged) {
    if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0) {
      return "cannot set no_new_privs: " + errno_text(errno);
    }
    return "";
  }
  if (const size_t threads = thread_count(); threads != 1) {
    return "cannot drop capabilities: hucprof runs " + std::to_string(threads) +
           " threads and capabilities are per thread; they must be dropped before any starts";
  }
  // The bounding set first: removing from it needs CAP_SETPCAP, which the capset() below drops.
  for (int cap = 0; cap < capabilities_known(); ++cap) {
    if (!(plan.bounding_drop & capability_bit(cap))) continue;
    if (cap_drop_bound(static_cast<cap_value_t>(cap)) != 0) {
      return "cannot remove " + capability_names(capability_bit(cap)) +
             " from the bounding set: " + errno_text(errno);
    }
  }
  if (cap_reset_ambient() != 0) return "cannot clear the ambient set: " + errno_text(errno);
  const CapPtr caps(cap_init());  // everything clear, inheritable included
  if (!caps) return "cannot drop capabilities: " + errno_text(errno);
  for (int cap = 0; cap < capabilities_known(); ++cap) {
    if (!(plan.keep & capability_bit(cap))) continue;
    const cap_value_t value[] = {static_cast<cap_value_t>(cap)};
    cap_set_flag(caps.get(), CAP_PERMITTED, 1, value, CAP_SET);
    cap_set_flag(caps.get(), CAP_EFFECTIVE, 1, value, CAP_SET);
  }
  if (cap_set_proc(caps.get()) != 0) return "capset: " + errno_text(errno);
  // No execve() can ever gain privileges again (setuid binaries, file capabilities).
  if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0) {
    return "cannot set no_new_privs: " + errno_text(errno);
  }

  const CapabilitySets now = read_capability_sets();
  if (now.effective != plan.keep || now.permitted != plan.keep || now.inheritable != 0 ||
      now.ambient != 0 || (now.bounding & plan.bounding_drop) != 0) {
    return "capabilities after the drop are not the planned ones: effective " +
           capability_names(now.effective) + ", wanted " + capability_names(plan.keep);
  }
  return "";
}

std::string describe_privileges(const CapabilitySets& before, const PrivilegePlan& plan) {
  if (plan.unchanged) {
    return "capabilities: kept " + names_or_count(plan.keep) +
           " (--capabilities.keep=all); no_new_privs on";
  }
  const CapabilityMask dropped = before.permitted & ~plan.keep;
  std::string line = "capabilities: kept " + capability_names(plan.keep);
  line += "; dropped " + (dropped ? names_or_count(dropped) : std::string("nothing"));
  if (plan.bounding_drop) line += ", bounding set too";
  if (plan.bounding_stuck) {
    line += "; " + names_or_count(plan.bounding_stuck) +
            " stay in the bounding set (no CAP_SETPCAP to remove them; no_new_privs keeps them "
            "out of reach)";
  }
  if (plan.missing) {
    line += "; --capabilities.keep names " + capability_names(plan.missing) +
            ", which hucprof did not have";
  }
  return line + "; no_new_privs on";
}

bool drop_to_least_privilege(const RunOptions& options) {
  const CapabilitySets before = read_capability_sets();
  CapabilityKeep keep = options.capabilities_keep;
  // Without the drains' map reads nothing is counted: keep what this kernel wants for them.
  const bool maps_need_capability = !keep.all && map_reads_need_capability();
  if (maps_need_capability) keep = with_map_access(keep, before.permitted);
  const PrivilegePlan plan = plan_privileges(before, keep);
  if (const std::string error = drop_privileges(plan); !error.empty()) {
    spdlog::error("{} (--capabilities.keep=all keeps every capability)", error);
    return false;
  }
  spdlog::info("{}{}", describe_privileges(before, plan),
               maps_need_capability ? "; CAP_BPF or CAP_SYS_ADMIN kept: this kernel refuses bpf() "
                                      "on the maps' descriptors without one "
                                      "(kernel.unprivileged_bpf_disabled is set)"
                                    : "");
  return true;
}

}  // namespace hucprof
