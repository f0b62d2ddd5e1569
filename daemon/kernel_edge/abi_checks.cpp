#include "kernel_edge/abi_checks.h"

#include <bpf/libbpf.h>

#include <cstdint>
#include <initializer_list>
#include <string>

#include "hucprof_abi.h"

namespace hucprof {

// The layout both sides rely on, spelled out: a change to hucprof_abi.h that moves a field
// fails the build here first.
static_assert(sizeof(huc_range) == 16);
static_assert(sizeof(huc_rescue_slot) == 64);
static_assert(sizeof(huc_site_key) == 32);
static_assert(offsetof(huc_site_key, syscall_nr) == 16 && offsetof(huc_site_key, direction) == 20 &&
              offsetof(huc_site_key, generation) == 21 && offsetof(huc_site_key, cgroup_id) == 24);
static_assert(sizeof(huc_site_value) == 24 + 8 * HUC_CLASSIFY_ENDS);
static_assert(sizeof(huc_site_slot) == 40 + sizeof(huc_site_value) &&
              offsetof(huc_site_slot, seq) == 32 && offsetof(huc_site_slot, value) == 40);
static_assert(sizeof(huc_site_table) == 2 * HUC_SITE_SLOTS * sizeof(huc_site_slot) + 8);
static_assert(sizeof(huc_subcheck_key) == 40);
static_assert(sizeof(huc_object_key) == 48);
static_assert(sizeof(huc_slab_cache) == HUC_CACHE_NAME_LEN + 24);
static_assert(sizeof(huc_cpu_state) == 48);
static_assert(sizeof(huc_latency_key) == 40);
static_assert(sizeof(huc_sample_key) == 48 && offsetof(huc_sample_key, cgroup_id) == 8 &&
              offsetof(huc_sample_key, generation) == 20 && offsetof(huc_sample_key, comm) == 24 &&
              offsetof(huc_sample_key, tgid) == 40);
static_assert(sizeof(huc_busy_key) == 16 && offsetof(huc_busy_key, generation) == 10);
static_assert(sizeof(huc_stack_key) == 16);
static_assert(sizeof(huc_stack) == 8 + HUC_FULL_STACK_DEPTH * 8);
static_assert(sizeof(huc_short_stack) == 8 + HUC_SHORT_STACK_DEPTH * 8);
static_assert((HUC_MAX_RANGES & (HUC_MAX_RANGES - 1)) == 0, "BPF masks range indices");
static_assert((HUC_MAX_HELPER_RANGES & (HUC_MAX_HELPER_RANGES - 1)) == 0,
              "BPF masks range indices");

namespace {

struct Expected {
  const char* map;
  size_t key;
  size_t value;
};

std::string check(const bpf_object* obj, std::initializer_list<Expected> expected) {
  for (const auto& e : expected) {
    const bpf_map* map = bpf_object__find_map_by_name(obj, e.map);
    if (!map) return std::string("map ") + e.map + " missing from the BPF object";
    if (bpf_map__key_size(map) != e.key || bpf_map__value_size(map) != e.value) {
      return std::string("map ") + e.map + " is key " + std::to_string(bpf_map__key_size(map)) +
             "/value " + std::to_string(bpf_map__value_size(map)) + " bytes in BPF but key " +
             std::to_string(e.key) + "/value " + std::to_string(e.value) + " in the daemon";
    }
  }
  return "";
}

}  // namespace

std::string check_probe_abi(const bpf_object* obj) {
  std::string mismatch =
      check(obj, {
                     {"sites", sizeof(huc_site_key), sizeof(huc_site_value)},
                     {"subchecks", sizeof(huc_subcheck_key), sizeof(uint64_t)},
                     {"objects", sizeof(huc_object_key), sizeof(uint64_t)},
                     {"slab_caches", sizeof(uint64_t), sizeof(huc_slab_cache)},
                     {"latency", sizeof(huc_latency_key), sizeof(uint64_t)},
                     {"short_stacks", sizeof(huc_stack_key), sizeof(huc_short_stack)},
                     {"full_stacks", sizeof(huc_stack_key), sizeof(huc_stack)},
                     {"cpu_state", 4, sizeof(huc_cpu_state)},
                     {"drops", 4, sizeof(uint64_t)},
                     {"helper_walks", 4, sizeof(uint64_t)},
                 });
  if (!mismatch.empty()) return mismatch;
  // The site tables are the first member of the per-CPU scratch; the rest is BPF's own.
  const bpf_map* scratch = bpf_object__find_map_by_name(obj, "scratch");
  if (!scratch) return "map scratch missing from the BPF object";
  if (bpf_map__value_size(scratch) < sizeof(huc_site_table)) {
    return "map scratch is value " + std::to_string(bpf_map__value_size(scratch)) +
           " bytes in BPF, smaller than the daemon's site table (" +
           std::to_string(sizeof(huc_site_table)) + ")";
  }
  return "";
}

std::string check_sampler_abi(const bpf_object* obj) {
  return check(obj, {
                        {"samples", sizeof(huc_sample_key), sizeof(uint64_t)},
                        {"busy_samples", sizeof(huc_busy_key), sizeof(uint64_t)},
                        {"sample_stacks", sizeof(huc_stack_key), sizeof(huc_stack)},
                        {"contexts", 4, sizeof(uint64_t)},
                        {"sample_drops", 4, sizeof(uint64_t)},
                        {"sample_excluded", 4, sizeof(uint64_t)},
                        {"sample_unfollowed", 4, sizeof(uint64_t)},
                    });
}

}  // namespace hucprof
