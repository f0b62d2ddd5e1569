// Whether sub-check classification can read a kernel, for the layouts Debian's kernels have
// (read with bpftool from their BTF: 6.1, 6.12, the 6.18 development kernel, 7.2 and 7.3).
#include "core/kernel/page_layout.h"

#include <gtest/gtest.h>

namespace hucprof {
namespace {

PageLayout layout(PageLayout::Flags flags, const char* head) {
  PageLayout l;
  l.flags = flags;
  l.head_field = head;
  l.page_type = true;
  l.page_size = 64;
  l.hugetlb_vmemmap_optimize = true;
  l.task_stack = true;
  l.task_pagefault_disabled = true;
  return l;
}

const SlabMarker kPgSlab{-1, 9, "PG_slab = 9 in enum pageflags"};
const SlabMarker kPgtySlab{245, -1, "PGTY_slab = 245 in enum pagetype"};

TEST(ClassifierReadiness, EveryDebianLayoutIsRead) {
  const auto v61 = classifier_readiness(layout(PageLayout::Flags::Word, "compound_head"), kPgSlab);
  EXPECT_TRUE(v61.ok) << v61.detail;
  EXPECT_FALSE(v61.compound_info_mask);
  EXPECT_EQ(v61.detail, "struct page of 64 bytes, tail pages by compound_head (head + 1)");
  EXPECT_TRUE(classifier_readiness(layout(PageLayout::Flags::Word, "compound_head"), kPgtySlab).ok);
  EXPECT_TRUE(
      classifier_readiness(layout(PageLayout::Flags::Memdesc, "compound_head"), kPgtySlab).ok);
  const auto v73 =
      classifier_readiness(layout(PageLayout::Flags::Memdesc, "compound_info"), kPgtySlab);
  EXPECT_TRUE(v73.ok);
  EXPECT_TRUE(v73.compound_info_mask);
}

TEST(ClassifierReadiness, CompoundInfoIsAMaskOnlyWithTheVmemmapOptimizationAndAPowerOfTwoPage) {
  PageLayout l = layout(PageLayout::Flags::Memdesc, "compound_info");
  l.hugetlb_vmemmap_optimize = false;
  EXPECT_FALSE(classifier_readiness(l, kPgtySlab).compound_info_mask);
  l = layout(PageLayout::Flags::Memdesc, "compound_info");
  l.page_size = 80;  // e.g. a debug build's struct page
  const auto r = classifier_readiness(l, kPgtySlab);
  EXPECT_TRUE(r.ok);
  EXPECT_FALSE(r.compound_info_mask);
  EXPECT_EQ(r.detail, "struct page of 80 bytes, tail pages by compound_info (head + 1)");
}

TEST(ClassifierReadiness, WhatIsMissingIsNamed) {
  PageLayout l = layout(PageLayout::Flags::Absent, "");
  l.page_type = false;
  l.task_pagefault_disabled = false;
  EXPECT_EQ(classifier_readiness(l, kPgtySlab).detail,
            "the kernel's layout is not one the classifier reads: struct page has neither "
            "compound_head nor compound_info, struct page has no page_type, task_struct has no "
            "pagefault_disabled");
  // PG_slab is read from the flags word, PGTY_slab from page_type: each needs only its own.
  EXPECT_FALSE(
      classifier_readiness(layout(PageLayout::Flags::Absent, "compound_head"), kPgSlab).ok);
  EXPECT_TRUE(
      classifier_readiness(layout(PageLayout::Flags::Absent, "compound_head"), kPgtySlab).ok);
  PageLayout unread;
  unread.unreadable = "no kernel BTF";
  EXPECT_EQ(classifier_readiness(unread, kPgtySlab).detail,
            "the kernel BTF cannot be read (no kernel BTF)");
}

}  // namespace
}  // namespace hucprof
