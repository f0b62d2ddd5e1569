#include "core/drain/raw_drain.h"

namespace hucprof {

const char* drop_reason_name(uint32_t reason) {
  switch (reason) {
    case HUC_DROP_SITES_MAP_FULL:
      return "sites_map_full";
    case HUC_DROP_SUBCHECKS_MAP_FULL:
      return "subchecks_map_full";
    case HUC_DROP_SAMPLES_MAP_FULL:
      return "samples_map_full";
    case HUC_DROP_LATENCY_MAP_FULL:
      return "latency_map_full";
    case HUC_DROP_STACK_COLLISION:
      return "stack_collision";
    case HUC_DROP_STACK_MAP_FULL:
      return "stack_map_full";
    case HUC_DROP_CALLER_UNREADABLE:
      return "caller_unreadable";
    case HUC_DROP_SUBCHECK_UNMATCHED:
      return "subcheck_unmatched";
    case HUC_DROP_BUSY_MAP_FULL:
      return "busy_map_full";
  }
  return "unknown";
}

const char* context_name(uint32_t context) {
  switch (context) {
    case HUC_CTX_KERNEL:
      return "kernel";
    case HUC_CTX_USER:
      return "user";
    case HUC_CTX_IDLE:
      return "idle";
  }
  return "unknown";
}

const char* subcheck_step_name(uint32_t kind) {
  switch (kind) {
    case HUC_CHECK_SLAB:
      return "slab_object";
    case HUC_CHECK_VMALLOC:
      return "vmap_area";
    case HUC_CHECK_STACK:
      return "stack_object";
    case HUC_CHECK_TEXT:
      return "kernel_text";
    case HUC_CHECK_PAGE:
      return "virt_addr_valid";
    case HUC_CHECK_HEAP:
      return "heap_object";
  }
  return "unknown";
}

const char* object_kind_name(uint32_t end) {
  switch (end) {
    case HUC_END_STACK:
      return "stack";
    case HUC_END_VMALLOC:
      return "vmalloc";
    // __virt_addr_valid ran and the folio was no slab, or the address was not valid: the page
    // allocator's memory, the kernel image, a module's data or a vmalloc address copied with page
    // faults off. The classifier does not tell these apart, so it claims none of them.
    case HUC_END_PAGE:
      return "other";
    case HUC_END_SLAB:
      return "slab";
  }
  return "unknown";
}

const char* slab_region_name(uint32_t region) {
  switch (region) {
    case HUC_REGION_INSIDE:
      return "inside";
    case HUC_REGION_OUTSIDE:
      return "outside";
  }
  return "unknown";
}

std::string slab_cache_name(const huc_slab_cache& cache) {
  std::string name;
  for (char c : cache.name) {
    if (c == '\0') break;
    if (c < 0x20 || c > 0x7e) return "[unreadable]";
    name += c;
  }
  return name.empty() ? "[unreadable]" : name;
}

const char* exclude_reason_name(uint32_t reason) {
  switch (reason) {
    case HUC_EXCLUDE_INTERRUPT:
      return "interrupt";
  }
  return "unknown";
}

const char* helper_walk_name(uint32_t walk) {
  switch (walk) {
    case HUC_WALK_LEARNED:
      return "learned_offsets";
    case HUC_WALK_STACK:
      return "stack_walk";
    case HUC_WALK_MISMATCH:
      return "offset_mismatch";
  }
  return "unknown";
}

}  // namespace hucprof
