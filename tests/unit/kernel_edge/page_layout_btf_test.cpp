// read_page_layout and read_slab_marker on BTF built here in the shapes Debian's kernels have
// (bpftool btf dump of their vmlinux: struct page keeps compound_head/compound_info inside an
// anonymous struct inside an anonymous union; 6.18+ wrap flags in memdesc_flags_t). No kernel.
#include <gtest/gtest.h>

#include <bpf/btf.h>

#include "kernel_edge/kernel_facts.h"
#include "kernel_edge/libbpf_ptr.h"

namespace hucprof {
namespace {

struct KernelShape {
  bool memdesc_flags = false;
  const char* head = "compound_head";
  bool hvo = false;
  bool pagetype_enum = false;
};

// A BTF with struct page, task_struct and the enums the daemon reads, in `shape`.
BtfPtr kernel_btf(const KernelShape& shape) {
  BtfPtr b(btf__new_empty());
  const int ulong = btf__add_int(b.get(), "long unsigned int", 8, 0);
  const int uint = btf__add_int(b.get(), "unsigned int", 4, 0);
  const int int_t = btf__add_int(b.get(), "int", 4, BTF_INT_SIGNED);
  const int ptr = btf__add_ptr(b.get(), 0);
  int flags_type = ulong;
  if (shape.memdesc_flags) {
    const int anon = btf__add_struct(b.get(), nullptr, 8);
    btf__add_field(b.get(), "f", ulong, 0, 0);
    flags_type = btf__add_typedef(b.get(), "memdesc_flags_t", anon);
  }
  const int head_struct = btf__add_struct(b.get(), nullptr, 8);
  btf__add_field(b.get(), shape.head, ulong, 0, 0);
  const int lru = btf__add_struct(b.get(), nullptr, 40);
  btf__add_field(b.get(), "mapping", ptr, 64, 0);
  const int unions = btf__add_union(b.get(), nullptr, 40);
  btf__add_field(b.get(), nullptr, lru, 0, 0);
  btf__add_field(b.get(), nullptr, head_struct, 0, 0);
  const int type_union = btf__add_union(b.get(), nullptr, 4);
  btf__add_field(b.get(), "page_type", uint, 0, 0);
  btf__add_field(b.get(), "_mapcount", int_t, 0, 0);
  btf__add_struct(b.get(), "page", 64);
  btf__add_field(b.get(), "flags", flags_type, 0, 0);
  btf__add_field(b.get(), nullptr, unions, 64, 0);
  btf__add_field(b.get(), nullptr, type_union, 384, 0);
  btf__add_field(b.get(), "memcg_data", ulong, 448, 0);
  btf__add_struct(b.get(), "task_struct", 64);
  btf__add_field(b.get(), "stack", ptr, 0, 0);
  btf__add_field(b.get(), "pagefault_disabled", int_t, 64, 0);
  if (shape.pagetype_enum) {
    btf__add_enum(b.get(), "pagetype", 4);
    btf__add_enum_value(b.get(), "PGTY_buddy", 240);
    btf__add_enum_value(b.get(), "PGTY_slab", 245);
  } else {
    btf__add_enum(b.get(), "pageflags", 4);
    btf__add_enum_value(b.get(), "PG_locked", 0);
    btf__add_enum_value(b.get(), "PG_slab", 9);
  }
  if (shape.hvo) {
    const int proto = btf__add_func_proto(b.get(), 0);
    btf__add_func(b.get(), "hugetlb_vmemmap_optimize_folio", BTF_FUNC_GLOBAL, proto);
  }
  return b;
}

TEST(PageLayoutBtf, Debian61) {
  const BtfPtr b = kernel_btf({});
  const PageLayout l = read_page_layout(b.get());
  EXPECT_EQ(l.unreadable, "");
  EXPECT_EQ(l.flags, PageLayout::Flags::Word);
  EXPECT_EQ(l.head_field, "compound_head");
  EXPECT_TRUE(l.page_type);
  EXPECT_EQ(l.page_size, 64u);
  EXPECT_FALSE(l.hugetlb_vmemmap_optimize);
  EXPECT_TRUE(l.task_stack);
  EXPECT_TRUE(l.task_pagefault_disabled);
  EXPECT_EQ(read_slab_marker(b.get()).flag_bit, 9);
}

TEST(PageLayoutBtf, Debian73) {
  const BtfPtr b = kernel_btf({true, "compound_info", true, true});
  const PageLayout l = read_page_layout(b.get());
  EXPECT_EQ(l.flags, PageLayout::Flags::Memdesc);
  EXPECT_EQ(l.head_field, "compound_info");
  EXPECT_TRUE(l.hugetlb_vmemmap_optimize);
  const SlabMarker marker = read_slab_marker(b.get());
  EXPECT_EQ(marker.page_type, 245);
  const ClassifierReadiness r = classifier_readiness(l, marker);
  EXPECT_TRUE(r.ok) << r.detail;
  EXPECT_TRUE(r.compound_info_mask);
}

TEST(PageLayoutBtf, NoBtfOrNoSuchFieldsIsSaid) {
  EXPECT_EQ(read_page_layout(nullptr).unreadable, "no kernel BTF");
  const BtfPtr b = kernel_btf({true, "compound_whatever", false, true});
  const PageLayout l = read_page_layout(b.get());
  EXPECT_EQ(l.head_field, "");
  EXPECT_FALSE(classifier_readiness(l, read_slab_marker(b.get())).ok);
}

}  // namespace
}  // namespace hucprof
