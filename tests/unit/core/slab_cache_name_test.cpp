// The cache name BPF read (a fixed buffer) → the object label.
#include <gtest/gtest.h>

#include <cstring>

#include "core/drain/raw_drain.h"

namespace hucprof {
namespace {

huc_slab_cache cache_named(const char* bytes, size_t n) {
  huc_slab_cache c{};
  std::memcpy(c.name, bytes, n);
  return c;
}

TEST(SlabCacheName, NameUpToItsNul) {
  EXPECT_EQ(slab_cache_name(cache_named("kmalloc-512\0junk", 16)), "kmalloc-512");
  EXPECT_EQ(slab_cache_name(cache_named("skbuff_small_head", 18)), "skbuff_small_head");
}

// bpf_probe_read_kernel_str cut a long name to the buffer, ending it with a NUL; a buffer with
// none (never written so) is taken whole rather than read past.
TEST(SlabCacheName, AFullBufferIsTakenWhole) {
  huc_slab_cache c{};
  std::memset(c.name, 'a', sizeof(c.name));
  EXPECT_EQ(slab_cache_name(c), std::string(HUC_CACHE_NAME_LEN, 'a'));
}

TEST(SlabCacheName, EmptyOrNonPrintableIsUnreadable) {
  EXPECT_EQ(slab_cache_name(huc_slab_cache{}), "[unreadable]");
  EXPECT_EQ(slab_cache_name(cache_named("kmalloc\x01", 9)), "[unreadable]");
  EXPECT_EQ(slab_cache_name(cache_named("\xff\xfe", 3)), "[unreadable]");
}

}  // namespace
}  // namespace hucprof
