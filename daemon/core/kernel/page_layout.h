#pragma once
#include <cstdint>
#include <string>

#include "core/kernel/slab_marker.h"

namespace hucprof {

// What sub-check classification (bpf/usercopy_classify.bpf.h) reads of the running kernel, as
// its BTF describes it: read at the kernel edge (read_page_layout), decided upon here. The BPF
// object reads the same fields through CO-RE flavours guarded by bpf_core_field_exists(), so a
// kernel without one still loads it; this decides whether its answers can be trusted.
struct PageLayout {
  std::string unreadable;  // why the BTF could not be asked ("" when it could)
  // struct page (6.1-6.17: unsigned long flags; from 6.18 memdesc_flags_t, a struct around it)
  enum class Flags { Absent, Word, Memdesc };
  Flags flags = Flags::Absent;
  // The word that marks a tail page (bit 0) and leads to its head: "compound_head", or
  // "compound_info" (its successor, Debian's 7.2 and 7.3); "" when neither is there.
  std::string head_field;
  bool page_type = false;  // page->page_type (the PGTY_* type in its top byte)
  uint32_t page_size = 0;  // sizeof(struct page)
  // CONFIG_HUGETLB_PAGE_OPTIMIZE_VMEMMAP, seen as hugetlb_vmemmap_optimize_folio() in the BTF.
  bool hugetlb_vmemmap_optimize = false;
  // task_struct: the object inside the current stack, and pagefault_disabled() before vmalloc.
  bool task_stack = false;
  bool task_pagefault_disabled = false;
};

// Whether classification can read this kernel, and how.
struct ClassifierReadiness {
  bool ok = false;
  std::string detail;  // what it reads, or what it lacks
  // A tail page's compound_info holds a mask of its own address, not its head + 1: the kernel's
  // compound_info_has_mask() (the HugeTLB vmemmap optimization built in, struct page a power of
  // two in size).
  bool compound_info_mask = false;
};

ClassifierReadiness classifier_readiness(const PageLayout& layout, const SlabMarker& marker);

}  // namespace hucprof
