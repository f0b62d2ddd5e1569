#pragma once
#include <array>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "core/drain/missed_runs.h"
#include "core/drain/program_cost.h"
#include "hucprof_abi.h"

namespace hucprof {

// What one drain read out of the kernel maps: the counts of the generation it retired (per
// interval, not cumulative: the kernel keys are deleted once read), the stacks they reference,
// and the cumulative per-CPU arrays (summed over CPUs). Plain data: the kernel edge fills it, the
// pure IntervalBuilder turns it into folded deltas, tests build it by hand.
struct RawSiteCount {
  huc_site_key key{};
  uint64_t calls = 0;
  uint64_t bytes = 0;
  uint64_t full_stack_id = 0;  // id in full_stacks of a stack seen for this key, 0: none
  // Classified calls by where their sub-checks ended (enum huc_classify_end): the kind of
  // object each copied. All 0 where the sub-checks are not classified.
  std::array<uint64_t, HUC_CLASSIFY_ENDS> ended_at{};
};
// A u64 counter of a hash map.
template <typename Key>
struct RawCount {
  Key key{};
  uint64_t count = 0;
};
using RawSubcheckCount = RawCount<huc_subcheck_key>;
using RawObjectCount = RawCount<huc_object_key>;
using RawLatencyCount = RawCount<huc_latency_key>;
using RawSampleCount = RawCount<huc_sample_key>;
using RawBusyCount = RawCount<huc_busy_key>;

using StackFrames = std::vector<uint64_t>;  // leaf first, kernel addresses
// Stacks by content id (hucprof_abi.h: the same stack always has the same id).
using StackTable = std::map<uint64_t, StackFrames>;

// Memory the kernel charges for one BPF map (its fdinfo "memlock"), by the map's kernel name.
struct MapMemory {
  std::string map;
  uint64_t bytes = 0;
};

struct RawDrain {
  bool probes = false;    // probe maps were read
  bool sampling = false;  // sampler maps were read
  std::vector<RawSiteCount> sites;
  std::vector<RawSubcheckCount> subchecks;
  // Classified slab checks by call site key, cache and usercopy region (probe mode).
  std::vector<RawObjectCount> objects;
  // The name of every cache `objects` references whose name was read (kmem_cache address →
  // name).
  std::map<uint64_t, std::string> slab_caches;
  std::vector<RawLatencyCount> latency;
  std::vector<RawSampleCount> samples;
  // Busy samples by cgroup (sampling): the split of contexts' kernel and user counts by workload.
  std::vector<RawBusyCount> busy;
  // Every stack the counts above reference and the kernel still had. The kernel deletes them
  // after this drain: whoever needs a stack later (profiles) keeps its own copy. Full stacks
  // are probe mode's, by RawSiteCount::full_stack_id, for profiles.
  StackTable short_stacks;
  StackTable full_stacks;
  StackTable sample_stacks;
  std::array<uint64_t, HUC_CTX_COUNT> contexts{};
  // Samples with a check on the stack that are not its cost, by enum huc_exclude_reason
  // (cumulative; they are in contexts[HUC_CTX_KERNEL] too).
  std::array<uint64_t, HUC_EXCLUDE_REASONS> excluded{};
  // Drops by enum huc_drop_reason, summed over the probe and sampler objects (cumulative).
  std::array<uint64_t, HUC_DROP_REASONS> drops{};
  // Helper-called checks by how their call site was found (enum huc_helper_walk), probe only
  // (cumulative).
  std::array<uint64_t, HUC_WALK_KINDS> helper_walks{};
  // Every map of the loaded objects.
  std::vector<MapMemory> map_memory;
  // What the loaded programs cost the kernel so far (bpf_stats), and whether it is counting.
  ProgramCosts program_costs;
  // The runs of every loaded program the kernel skipped, as far as it counts them (cumulative);
  // of the check's, those the rescue program counted are left out: they are in `sites`.
  std::vector<RawMisses> misses;
  // Checks the rescue program counted (cumulative; bpf/hucprof_abi.h, "Probe mode's rescue").
  // Unset while no rescue program is attached.
  std::optional<uint64_t> rescued_checks;
};

// Label for each enum huc_drop_reason, and for each enum huc_context.
const char* drop_reason_name(uint32_t reason);
const char* context_name(uint32_t context);
// The `step` label of a sub-check (enum huc_check_kind): which function of the checks ran,
// named after it ("virt_addr_valid" for __virt_addr_valid), never after a kind of object.
const char* subcheck_step_name(uint32_t kind);
// The `object_kind` label of a classified call's end (enum huc_classify_end): what the
// classifier saw of the object, and nothing it did not ("other": neither stack, vmalloc nor slab).
const char* object_kind_name(uint32_t end);
// The `object` label of an object hucprof does not identify: every kind but slab, and a slab
// object whose cache it could not count or name.
inline constexpr const char* kUnknownObject = "[unknown]";
// The `region` label (enum huc_slab_region) of a slab object; kNoRegion for other kinds, which
// have no usercopy region.
const char* slab_region_name(uint32_t region);
inline constexpr const char* kNoRegion = "none";
// A cache's name as BPF read it (NUL-terminated, cut to HUC_CACHE_NAME_LEN - 1 bytes); one that
// could not be read, or holds a byte outside printable ASCII, is "[unreadable]".
std::string slab_cache_name(const huc_slab_cache& cache);
const char* helper_walk_name(uint32_t walk);
const char* exclude_reason_name(uint32_t reason);

// Drops found in user space, on top of the kernel's.
inline constexpr const char* kDropSymbolUnresolved = "symbol_unresolved";
inline constexpr const char* kDropStackTruncated = "stack_truncated";
inline constexpr const char* kDropStackMissing = "stack_missing";
// Events counted in full whose stack went to the profiles' overflow stack (StackInterner limit).
inline constexpr const char* kDropProfileStackLimit = "profile_stack_limit";

}  // namespace hucprof
