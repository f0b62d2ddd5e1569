#pragma once
#include <cstdint>
#include <string>

namespace hucprof {

// How the running kernel marks a page as slab, read from its BTF: the PGTY_slab page type in the
// top byte of page->page_type (6.12+) or the PG_slab bit of page->flags (up to 6.9). The probe's
// sub-check classification needs one of them to tell a slab object (__check_heap_object) from a
// page one. Read by the daemon, not by CO-RE enum relocations in the BPF object: libbpf 1.1 looks
// for a type vmlinux lacks in the module BTFs too, and listing those needs CAP_SYS_ADMIN, so
// under the unit's CAP_BPF/CAP_PERFMON the whole object failed to load (EPERM) on 6.1, which has
// no enum pagetype.
struct SlabMarker {
  int64_t page_type = -1;  // PGTY_slab's value, -1 when the kernel has none
  int64_t flag_bit = -1;   // PG_slab's value, -1 when the kernel has none
  std::string detail;      // what was found, or why nothing

  bool known() const { return page_type >= 0 || flag_bit >= 0; }
};

}  // namespace hucprof
