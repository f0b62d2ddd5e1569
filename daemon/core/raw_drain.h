#pragma once
#include <array>
#include <cstdint>
#include <map>
#include <vector>

#include "hucprof_abi.h"

namespace hucprof {

// What one drain read out of the kernel maps: cumulative per-CPU sums (already added up over
// CPUs) and the stacks they reference. Plain data: the kernel edge fills it, the pure
// IntervalBuilder turns it into folded deltas, tests build it by hand.
struct RawSiteCount {
  huc_site_key key{};
  uint64_t calls = 0;
  uint64_t bytes = 0;
  int32_t full_stack_id = -1;  // the key's first full stack in full_stacks, -1: none captured
};
// A per-CPU u64 counter summed over CPUs.
template <typename Key>
struct RawCount {
  Key key{};
  uint64_t count = 0;
};
using RawSubcheckCount = RawCount<huc_subcheck_key>;
using RawLatencyCount = RawCount<huc_latency_key>;
using RawSampleCount = RawCount<huc_sample_key>;

using StackFrames = std::vector<uint64_t>;  // leaf first, kernel addresses

struct RawDrain {
  bool probes = false;    // probe maps were read
  bool sampling = false;  // sampler maps were read
  std::vector<RawSiteCount> sites;
  std::vector<RawSubcheckCount> subchecks;
  std::vector<RawLatencyCount> latency;
  std::vector<RawSampleCount> samples;
  // Stacks referenced above, by id; a missing id means the kernel no longer had it.
  std::map<int32_t, StackFrames> short_stacks;
  std::map<int32_t, StackFrames> sample_stacks;
  // Probe mode: full stacks of sites (for profiles) by RawSiteCount::full_stack_id, each only in
  // the drain that first read it.
  std::map<int32_t, StackFrames> full_stacks;
  std::array<uint64_t, HUC_CTX_COUNT> contexts{};
  // Drops by enum huc_drop_reason, summed over the probe and sampler objects.
  std::array<uint64_t, HUC_DROP_REASONS> drops{};
  // Helper-called checks by how their call site was found (enum huc_helper_walk), probe only.
  std::array<uint64_t, HUC_WALK_KINDS> helper_walks{};
};

// Label for each enum huc_drop_reason, and for each enum huc_context / huc_check_kind.
const char* drop_reason_name(uint32_t reason);
const char* context_name(uint32_t context);
const char* check_kind_name(uint32_t kind);
const char* helper_walk_name(uint32_t walk);

// Drops found in user space, on top of the kernel's.
inline constexpr const char* kDropSymbolUnresolved = "symbol_unresolved";
inline constexpr const char* kDropStackTruncated = "stack_truncated";
inline constexpr const char* kDropStackMissing = "stack_missing";
// Events counted in full whose stack went to the profiles' overflow stack (StackInterner limit).
inline constexpr const char* kDropProfileStackLimit = "profile_stack_limit";

}  // namespace hucprof
