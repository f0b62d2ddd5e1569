#include "core/kernel/privilege_plan.h"

#include <linux/capability.h>

namespace hucprof {

CapabilityKeep default_capability_keep() {
  return CapabilityKeep{false, capability_bit(CAP_SYSLOG)};
}

CapabilityKeep with_map_access(const CapabilityKeep& keep, CapabilityMask permitted) {
  CapabilityKeep out = keep;
  if (out.all) return out;
  out.caps |= (permitted & capability_bit(CAP_BPF)) ? capability_bit(CAP_BPF)
                                                    : capability_bit(CAP_SYS_ADMIN);
  return out;
}

PrivilegePlan plan_privileges(const CapabilitySets& now, const CapabilityKeep& keep) {
  PrivilegePlan plan;
  if (keep.all) {
    plan.unchanged = true;
    plan.keep = now.permitted;
    return plan;
  }
  plan.keep = keep.caps & now.permitted;
  plan.missing = keep.caps & ~now.permitted;
  const CapabilityMask leaving_bounding = now.bounding & ~plan.keep;
  if (now.effective & capability_bit(CAP_SETPCAP)) {
    plan.bounding_drop = leaving_bounding;
  } else {
    plan.bounding_stuck = leaving_bounding;
  }
  return plan;
}

}  // namespace hucprof
