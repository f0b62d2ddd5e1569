#include <gtest/gtest.h>

#include <map>
#include <memory>

#include "core/drain/site_table.h"

namespace hucprof {
namespace {

huc_site_key key(uint64_t caller, uint32_t seq) {
  huc_site_key k{};
  k.caller = caller;
  k.syscall_nr = 44;
  k.direction = HUC_DIR_FROM_USER;
  k.generation = static_cast<uint8_t>(seq);
  return k;
}

// A slot as the program leaves it: counted in sequence seq, in seq's half.
void count(huc_site_table& t, uint32_t slot, uint64_t caller, uint32_t seq, uint64_t calls) {
  huc_site_slot& s = t.slots[seq & 1][slot];
  s.key = key(caller, seq);
  s.seq = seq;
  s.value.calls = calls;
  s.value.bytes = calls * 64;
  s.value.full_stack_id = caller + 1;
  s.value.ended_at[HUC_END_STACK] = 1;         // one object on the task's stack
  s.value.ended_at[HUC_END_SLAB] = calls - 1;  // the rest slab objects
}

TEST(SiteTable, TakesTheRetiredSequencesSlotsOnly) {
  auto t = std::make_unique<huc_site_table>();
  count(*t, 0, 0x1000, 7, 5);  // retired
  count(*t, 3, 0x2000, 7, 2);  // retired
  count(*t, 1, 0x3000, 5, 9);  // same half, drained two drains ago: not again
  count(*t, 4, 0x4000, 8, 4);  // the live half
  std::vector<RawSiteCount> sites;
  std::vector<RawSubcheckCount> subchecks;
  add_table_sites(*t, 7, sites, subchecks);
  ASSERT_EQ(sites.size(), 2u);
  EXPECT_EQ(sites[0].key.caller, 0x1000u);
  EXPECT_EQ(sites[0].calls, 5u);
  EXPECT_EQ(sites[0].bytes, 320u);
  EXPECT_EQ(sites[0].full_stack_id, 0x1001u);
  EXPECT_EQ(sites[1].key.caller, 0x2000u);
  EXPECT_EQ(sites[0].ended_at[HUC_END_STACK], 1u) << "the ends go on, for the object kinds";
  EXPECT_EQ(sites[0].ended_at[HUC_END_SLAB], 4u);
  // Kinds with a count only: slab, stack and page for the first; for the second, whose one slab
  // call made it 1 of each, the same three.
  ASSERT_EQ(subchecks.size(), 6u);
  EXPECT_EQ(subchecks[0].key.site.caller, 0x1000u);
  EXPECT_EQ(subchecks[0].key.kind, static_cast<uint32_t>(HUC_CHECK_SLAB));
  EXPECT_EQ(subchecks[0].count, 4u);
  EXPECT_EQ(subchecks[1].key.kind, static_cast<uint32_t>(HUC_CHECK_STACK));
  EXPECT_EQ(subchecks[1].count, 5u);
  EXPECT_EQ(subchecks[2].key.kind, static_cast<uint32_t>(HUC_CHECK_PAGE));
  EXPECT_EQ(subchecks[2].count, 4u);
  EXPECT_EQ(subchecks[3].key.site.caller, 0x2000u);
}

// mm/usercopy.c's order: check_stack_object on every call with bytes; an object on the stack
// stops there; a vmalloc'ed one goes to find_vmap_area; any other to __virt_addr_valid, and a
// slab folio's on to __check_heap_object.
TEST(SiteTable, EachEndCountsTheSubchecksThatRanBeforeIt) {
  __u64 ended_at[HUC_CLASSIFY_ENDS] = {};
  ended_at[HUC_END_STACK] = 1;
  ended_at[HUC_END_VMALLOC] = 20;
  ended_at[HUC_END_PAGE] = 300;
  ended_at[HUC_END_SLAB] = 4000;
  std::vector<RawSubcheckCount> subchecks;
  add_classified_subchecks(key(0x1000, 7), ended_at, subchecks);
  std::map<uint32_t, uint64_t> by_kind;
  for (const RawSubcheckCount& c : subchecks) {
    EXPECT_EQ(c.key.site.caller, 0x1000u);
    by_kind[c.key.kind] += c.count;
  }
  EXPECT_EQ(by_kind, (std::map<uint32_t, uint64_t>{{HUC_CHECK_STACK, 4321},
                                                   {HUC_CHECK_VMALLOC, 20},
                                                   {HUC_CHECK_PAGE, 4300},
                                                   {HUC_CHECK_SLAB, 4000}}));
}

TEST(SiteTable, KindsThatNeverRanAreNotCounted) {
  __u64 on_stack_only[HUC_CLASSIFY_ENDS] = {};
  on_stack_only[HUC_END_STACK] = 3;
  std::vector<RawSubcheckCount> subchecks;
  add_classified_subchecks(key(0x1000, 7), on_stack_only, subchecks);
  ASSERT_EQ(subchecks.size(), 1u);
  EXPECT_EQ(subchecks[0].key.kind, static_cast<uint32_t>(HUC_CHECK_STACK));
  EXPECT_EQ(subchecks[0].count, 3u);
}

TEST(SiteTable, AFreeSlotOfTheRetiredSequenceIsNotACount) {
  auto t = std::make_unique<huc_site_table>();
  count(*t, 2, 0x1000, 7, 1);
  t->slots[1][2].value.calls = 0;  // claimed by nobody in 7
  std::vector<RawSiteCount> sites;
  std::vector<RawSubcheckCount> subchecks;
  add_table_sites(*t, 7, sites, subchecks);
  EXPECT_TRUE(sites.empty());
}

TEST(SiteTable, ASequenceThatWrappedTheGenerationByteIsNotTheRetiredOne) {
  // 256 sequences apart: the same generation byte, the same half, drained long ago.
  auto t = std::make_unique<huc_site_table>();
  count(*t, 0, 0x1000, 7, 3);
  std::vector<RawSiteCount> sites;
  std::vector<RawSubcheckCount> subchecks;
  add_table_sites(*t, 7 + 256, sites, subchecks);
  EXPECT_TRUE(sites.empty());
}

TEST(SiteTable, EqualKeysFromSeveralCpusAndTheHashAreOneCount) {
  std::vector<RawSiteCount> sites = {
      {key(0x1000, 7), 5, 320, 0},
      {key(0x2000, 7), 1, 64, 9},
      {key(0x1000, 7), 2, 128, 11},
      {key(0x1000, 7), 1, 64, 12},
  };
  sites[0].ended_at[HUC_END_SLAB] = 5;
  sites[2].ended_at[HUC_END_SLAB] = 1;
  sites[2].ended_at[HUC_END_VMALLOC] = 1;
  merge_equal_keys(sites);
  ASSERT_EQ(sites.size(), 2u);
  EXPECT_EQ(sites[0].key.caller, 0x1000u);
  EXPECT_EQ(sites[0].calls, 8u);
  EXPECT_EQ(sites[0].bytes, 512u);
  EXPECT_EQ(sites[0].full_stack_id, 11u);  // the first there is
  EXPECT_EQ(sites[0].ended_at[HUC_END_SLAB], 6u);
  EXPECT_EQ(sites[0].ended_at[HUC_END_VMALLOC], 1u);
  EXPECT_EQ(sites[1].key.caller, 0x2000u);
  EXPECT_EQ(sites[1].calls, 1u);
}

TEST(SiteTable, KeysThatDifferInAnyFieldStayApart) {
  huc_site_key to_user = key(0x1000, 7);
  to_user.direction = HUC_DIR_TO_USER;
  huc_site_key other_syscall = key(0x1000, 7);
  other_syscall.syscall_nr = 45;
  std::vector<RawSiteCount> sites = {
      {key(0x1000, 7), 1, 1, 0}, {to_user, 1, 1, 0}, {other_syscall, 1, 1, 0}};
  merge_equal_keys(sites);
  EXPECT_EQ(sites.size(), 3u);

  std::vector<RawSubcheckCount> subchecks = {{{key(0x1000, 7), HUC_CHECK_SLAB, 0}, 3},
                                             {{key(0x1000, 7), HUC_CHECK_PAGE, 0}, 3},
                                             {{key(0x1000, 7), HUC_CHECK_SLAB, 0}, 4}};
  merge_equal_keys(subchecks);
  ASSERT_EQ(subchecks.size(), 2u);
  EXPECT_EQ(subchecks[0].count, 7u);
  EXPECT_EQ(subchecks[1].count, 3u);
}

}  // namespace
}  // namespace hucprof
