#include "core/page_layout.h"

#include <vector>

namespace hucprof {
namespace {

bool power_of_two(uint32_t n) { return n && (n & (n - 1)) == 0; }

std::string join(const std::vector<std::string>& words) {
  std::string out;
  for (const auto& w : words) out += (out.empty() ? "" : ", ") + w;
  return out;
}

}  // namespace

ClassifierReadiness classifier_readiness(const PageLayout& layout, const SlabMarker& marker) {
  ClassifierReadiness out;
  if (!layout.unreadable.empty()) {
    out.detail = "the kernel BTF cannot be read (" + layout.unreadable + ")";
    return out;
  }
  std::vector<std::string> missing;
  if (layout.head_field.empty())
    missing.push_back("struct page has neither compound_head nor compound_info");
  if (marker.page_type >= 0 && !layout.page_type) missing.push_back("struct page has no page_type");
  if (marker.page_type < 0 && marker.flag_bit >= 0 && layout.flags == PageLayout::Flags::Absent) {
    missing.push_back("struct page has no flags word");
  }
  if (!layout.page_size) missing.push_back("struct page has no size");
  if (!layout.task_stack) missing.push_back("task_struct has no stack");
  if (!layout.task_pagefault_disabled) missing.push_back("task_struct has no pagefault_disabled");
  if (!missing.empty()) {
    out.detail = "the kernel's layout is not one the classifier reads: " + join(missing);
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
