#include <gtest/gtest.h>

#include <memory>

#include "core/site_table.h"

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
  s.value.classified[HUC_CHECK_STACK] = calls;
  s.value.classified[HUC_CHECK_SLAB] = calls - 1;
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
  // Kinds with a count only: stack and slab for the first, stack alone for the second (slab 1).
  ASSERT_EQ(subchecks.size(), 4u);
  EXPECT_EQ(subchecks[0].key.site.caller, 0x1000u);
  EXPECT_EQ(subchecks[0].key.kind, static_cast<uint32_t>(HUC_CHECK_SLAB));
  EXPECT_EQ(subchecks[0].count, 4u);
  EXPECT_EQ(subchecks[1].key.kind, static_cast<uint32_t>(HUC_CHECK_STACK));
  EXPECT_EQ(subchecks[1].count, 5u);
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
  merge_equal_keys(sites);
  ASSERT_EQ(sites.size(), 2u);
  EXPECT_EQ(sites[0].key.caller, 0x1000u);
  EXPECT_EQ(sites[0].calls, 8u);
  EXPECT_EQ(sites[0].bytes, 512u);
  EXPECT_EQ(sites[0].full_stack_id, 11u);  // the first there is
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
