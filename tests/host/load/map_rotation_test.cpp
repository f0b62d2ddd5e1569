// The kernel edge of map rotation on this kernel: a drain takes exactly the retired generation's
// keys and deletes them, leaves the live ones, and the barrier between the two really is one
// (a map-in-map update the kernel makes wait for running programs). Real BPF maps, root.
#include <unistd.h>

#include <gtest/gtest.h>

#include <bpf/bpf.h>

#include "hucprof_abi.h"
#include "kernel_edge/libbpf_ptr.h"
#include "kernel_edge/map_reader.h"
#include "kernel_edge/program_barrier.h"

namespace hucprof {
namespace {

class MapRotation : public ::testing::Test {
 protected:
  void SetUp() override {
    if (geteuid() != 0) GTEST_SKIP() << "needs root to create BPF maps";
  }
};

huc_site_key site(uint64_t caller, uint8_t generation) {
  huc_site_key key{};
  key.caller = caller;
  key.syscall_nr = 45;
  key.generation = generation;
  return key;
}

TEST_F(MapRotation, DrainTakesAndDeletesOnlyRetiredKeys) {
  UniqueFd map(bpf_map_create(BPF_MAP_TYPE_HASH, "sites", sizeof(huc_site_key),
                              sizeof(huc_site_value), 64, nullptr));
  ASSERT_TRUE(map) << strerror(errno);
  for (uint64_t caller = 1; caller <= 20; ++caller) {
    for (uint8_t gen : {uint8_t{6}, uint8_t{7}}) {
      const huc_site_key key = site(caller, gen);
      const huc_site_value value{caller * 10 + gen, caller, 0, {}};
      ASSERT_EQ(bpf_map_update_elem(map.get(), &key, &value, BPF_NOEXIST), 0);
    }
  }
  std::vector<RawSiteCount> drained;
  drain_retired<huc_site_key, huc_site_value>(
      map.get(), 7, [&](const huc_site_key& key, const huc_site_value& v) {
        drained.push_back({key, v.calls, v.bytes, v.full_stack_id});
      });
  ASSERT_EQ(drained.size(), 20u);
  for (const RawSiteCount& c : drained) {
    EXPECT_EQ(c.key.generation, 6);
    EXPECT_EQ(c.calls, c.key.caller * 10 + 6);
  }
  const auto left = map_keys<huc_site_key>(map.get());
  ASSERT_EQ(left.size(), 20u);
  for (const huc_site_key& key : left) EXPECT_EQ(key.generation, 7);
}

TEST_F(MapRotation, RetiredStacksAreDeletedAndReadByContentId) {
  UniqueFd map(bpf_map_create(BPF_MAP_TYPE_HASH, "full_stacks", sizeof(huc_stack_key),
                              sizeof(huc_stack), 16, nullptr));
  ASSERT_TRUE(map) << strerror(errno);
  huc_stack stack{};
  stack.depth = 3;
  stack.ips[0] = 0xffffffff81000010;
  stack.ips[1] = 0xffffffff81000020;
  stack.ips[2] = 0xffffffff81000030;
  stack.ips[3] = 0xdeadbeef;  // beyond depth: never read
  for (uint8_t gen : {uint8_t{1}, uint8_t{2}}) {
    huc_stack_key key{};
    key.id = 0x1234;
    key.generation = gen;
    ASSERT_EQ(bpf_map_update_elem(map.get(), &key, &stack, BPF_NOEXIST), 0);
  }
  StackTable table;
  read_stack<huc_stack>(map.get(), 0x1234, 1, table);
  read_stack<huc_stack>(map.get(), 0x9999, 1, table);  // gone: nothing
  ASSERT_EQ(table.size(), 1u);
  EXPECT_EQ(table.at(0x1234),
            (StackFrames{0xffffffff81000010, 0xffffffff81000020, 0xffffffff81000030}));
  delete_retired_stacks(map.get(), 2);
  const auto left = map_keys<huc_stack_key>(map.get());
  ASSERT_EQ(left.size(), 1u);
  EXPECT_EQ(left[0].generation, 2);
}

TEST_F(MapRotation, BarrierIsAMapInMapUpdateAndItsMapsAreAccounted) {
  ProgramBarrier barrier;
  EXPECT_EQ(barrier.error(), "");
  barrier.wait();
  std::vector<MapMemory> memory;
  barrier.add_map_memory(memory);
  ASSERT_EQ(memory.size(), 2u);
  EXPECT_EQ(memory[0].map, "huc_barrier_in");
  EXPECT_EQ(memory[1].map, "huc_barrier");
  EXPECT_GT(memory[0].bytes, 0u);
}

}  // namespace
}  // namespace hucprof
