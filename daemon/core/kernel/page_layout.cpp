#include "core/kernel/page_layout.h"

namespace hucprof {
namespace {

bool power_of_two(uint32_t n) { return n && (n & (n - 1)) == 0; }

}  // namespace

ClassifierReadiness classifier_readiness(const PageLayout& layout, const SlabMarker& marker) {
  ClassifierReadiness out;
  if (!layout.unreadable.empty()) {
    out.detail = "the kernel BTF cannot be read (" + layout.unreadable + ")";
    return out;
  }
  std::string missing;
  auto needs = [&missing](bool there, const char* what) {
    if (!there) missing += (missing.empty() ? "" : ", ") + std::string(what);
  };
  needs(!layout.head_field.empty(), "struct page has neither compound_head nor compound_info");
  needs(marker.page_type < 0 || layout.page_type, "struct page has no page_type");
  // PG_slab is a bit of the flags word; PGTY_slab, where the kernel has it, is read instead.
  needs(marker.page_type >= 0 || marker.flag_bit < 0 || layout.flags != PageLayout::Flags::Absent,
        "struct page has no flags word");
  needs(layout.page_size != 0, "struct page has no size");
  needs(layout.task_stack, "task_struct has no stack");
  needs(layout.task_pagefault_disabled, "task_struct has no pagefault_disabled");
  if (!missing.empty()) {
    out.detail = "the kernel's layout is not one the classifier reads: " + missing;
    return out;
  }
  out.ok = true;
  out.compound_info_mask = layout.head_field == "compound_info" &&
                           layout.hugetlb_vmemmap_optimize && power_of_two(layout.page_size);
  out.detail =
      "struct page of " + std::to_string(layout.page_size) + " bytes, tail pages by " +
      layout.head_field +
      (layout.head_field != "compound_info" ? " (head + 1)"
       : out.compound_info_mask ? " (a mask of the tail's address: HugeTLB vmemmap optimization, "
                                  "power-of-two struct page)"
                                : " (head + 1)");
  return out;
}

}  // namespace hucprof
