// Small pure pieces the kernel edge relies on: CPU lists, address ranges for BPF, symbolizer
// reloads.
#include <gtest/gtest.h>

#include <sstream>

#include "core/symbols/address_ranges.h"
#include "core/symbols/module_list.h"
#include "core/symbols/symbolizer.h"
#include "core/text/cpu_list.h"
#include "kernel_ranges.h"

namespace hucprof {
namespace {

TEST(CpuList, ParsesRangesAndSingles) {
  EXPECT_EQ(parse_cpu_list("0-3,5,7-8\n"), (std::vector<int>{0, 1, 2, 3, 5, 7, 8}));
  EXPECT_EQ(parse_cpu_list("0\n"), (std::vector<int>{0}));
  EXPECT_EQ(parse_cpu_list(""), (std::vector<int>{}));
}

TEST(CpuList, RejectsGarbage) {
  EXPECT_FALSE(parse_cpu_list("0-").has_value());
  EXPECT_FALSE(parse_cpu_list("3-1").has_value());
  EXPECT_FALSE(parse_cpu_list("a").has_value());
  EXPECT_FALSE(parse_cpu_list("1,,2").has_value());
  // Each CPU once: the sampler opens one perf event per listed CPU (fuzz_cpu_list found these).
  EXPECT_FALSE(parse_cpu_list("3,1").has_value());
  EXPECT_FALSE(parse_cpu_list("0-3,2-5").has_value());
  EXPECT_FALSE(parse_cpu_list("0-65535,0-65535").has_value());
}

KallsymsIndex index_of(const std::string& text) {
  std::istringstream in(text);
  return KallsymsIndex::parse(in);
}

TEST(AddressRanges, CoversSuffixedPartsSortedAndMerged) {
  auto idx = index_of(
      "ffffffff81000000 T _stext\n"
      "ffffffff81216b98 t __check_object_size.cold\n"
      "ffffffff81216c00 t other\n"
      "ffffffff816c9250 T __check_object_size\n"
      "ffffffff816c9400 T check_heap_object\n"
      "ffffffff816c9500 T after\n"
      "ffffffff816ca000 T end\n");
  std::vector<std::string_view> names{"__check_object_size", "check_heap_object", "absent_fn"};
  auto r = build_address_ranges(idx, names);
  ASSERT_EQ(r.ranges.size(), 2u);
  EXPECT_EQ(r.ranges[0].start, 0xffffffff81216b98u);
  EXPECT_EQ(r.ranges[0].end, 0xffffffff81216c00u);
  // __check_object_size and check_heap_object touch: one merged range.
  EXPECT_EQ(r.ranges[1].start, 0xffffffff816c9250u);
  EXPECT_EQ(r.ranges[1].end, 0xffffffff816c9500u);
  EXPECT_EQ(r.missing, (std::vector<std::string>{"absent_fn"}));
  EXPECT_EQ(r.overflow, 0u);
}

TEST(AddressRanges, OverflowBeyondBpfCapacityIsReported) {
  std::string text;
  std::vector<std::string> names;
  char line[128];
  for (int i = 0; i < HUC_MAX_RANGES + 3; ++i) {
    // Gaps between helpers so no two ranges merge.
    std::snprintf(line, sizeof line, "%016llx t helper%d\n%016llx t gap%d\n",
                  0xffffffff81000000ull + i * 0x100ull, i, 0xffffffff81000080ull + i * 0x100ull, i);
    text += line;
    names.push_back("helper" + std::to_string(i));
  }
  text += "ffffffff82000000 T end\n";
  std::vector<std::string_view> views(names.begin(), names.end());
  auto r = build_address_ranges(index_of(text), views);
  EXPECT_EQ(r.ranges.size(), static_cast<size_t>(HUC_MAX_RANGES));
  EXPECT_EQ(r.overflow, 3u);
}

// Out-of-line copies of static inline helpers, as Debian's arm64 7.3 has them (60 of
// _inline_copy_from_user, one per object file that did not inline it): more than
// HUC_MAX_RANGES, all of them in the helpers' array, and BPF's search finds each one.
TEST(AddressRanges, HelperRangesHoldEveryOutOfLineCopy) {
  std::string text;
  char line[128];
  const int copies = 3 * HUC_MAX_RANGES;
  for (int i = 0; i < copies; ++i) {
    std::snprintf(line, sizeof line, "%016llx t _inline_copy_from_user\n%016llx t user%d\n",
                  0xffff800080000000ull + i * 0x1000ull, 0xffff8000800000a8ull + i * 0x1000ull, i);
    text += line;
  }
  text += "ffff800090000000 T end\n";
  const std::vector<std::string_view> names{"_inline_copy_from_user"};
  const auto r = build_address_ranges(index_of(text), names, HUC_MAX_HELPER_RANGES);
  ASSERT_EQ(r.ranges.size(), static_cast<size_t>(copies));
  EXPECT_EQ(r.overflow, 0u);
  std::vector<huc_range> bpf_array(HUC_MAX_HELPER_RANGES);
  std::copy(r.ranges.begin(), r.ranges.end(), bpf_array.begin());
  const auto n = static_cast<__u32>(r.ranges.size());
  for (int i = 0; i < copies; ++i) {
    const uint64_t start = 0xffff800080000000ull + i * 0x1000ull;
    EXPECT_TRUE(huc_in_ranges_of(bpf_array.data(), n, HUC_MAX_HELPER_RANGES, start)) << i;
    EXPECT_TRUE(huc_in_ranges_of(bpf_array.data(), n, HUC_MAX_HELPER_RANGES, start + 0xa7)) << i;
    EXPECT_FALSE(huc_in_ranges_of(bpf_array.data(), n, HUC_MAX_HELPER_RANGES, start + 0xa8)) << i;
  }
  // A full array: the search's last step still reaches the last entry.
  std::vector<huc_range> full(HUC_MAX_HELPER_RANGES);
  for (uint64_t i = 0; i < full.size(); ++i) full[i] = {0x1000 + i * 0x10, 0x1008 + i * 0x10};
  const auto last = static_cast<__u32>(full.size());
  EXPECT_TRUE(huc_in_ranges_of(full.data(), last, HUC_MAX_HELPER_RANGES, full.back().start));
  EXPECT_TRUE(huc_in_ranges_of(full.data(), last, HUC_MAX_HELPER_RANGES, full.front().start));
  EXPECT_FALSE(huc_in_ranges_of(full.data(), last, HUC_MAX_HELPER_RANGES, full.back().end));
  EXPECT_FALSE(huc_in_ranges_of(full.data(), last, HUC_MAX_HELPER_RANGES, 0xfff));
}

// /proc/modules lines as the kernel prints them: name size refcount users state address.
constexpr const char* kModulesBefore =
    "nf_tables 348160 0 - Live 0xffffffffc0a00000\n"
    "libcrc32c 12288 2 nf_tables,xfs, Live 0xffffffffc0100000\n";

// A symbolizer over vmlinux functions a and b whose reload finds module mymod too; `modules` is
// what /proc/modules says, `loads` counts kallsyms reads.
KallsymsSymbolizer symbolizer(const std::string& modules, int& loads) {
  return KallsymsSymbolizer(
      index_of("ffffffff81000000 T a\nffffffff81000100 T b\n"), modules,
      [&loads] {
        ++loads;
        return index_of(
            "ffffffff81000000 T a\nffffffff81000100 T b\n"
            "ffffffffc0001000 t mod_fn\t[mymod]\nffffffffc0002000 t mod_end\t[mymod]\n");
      },
      [&modules] { return std::optional<std::string>(modules); });
}

TEST(KallsymsSymbolizer, MissesAreRememberedNotReloaded) {
  int loads = 0;
  std::string modules = kModulesBefore;
  KallsymsSymbolizer s = symbolizer(modules, loads);
  EXPECT_EQ(s.name(0xffffffff81000010), "a");
  // Caller 0 (unreadable) and an address no module holds: unknown, and no reload for them.
  EXPECT_EQ(s.name(0), std::nullopt);
  EXPECT_EQ(s.name(0xffffffffc0001010), std::nullopt);
  for (int drain = 0; drain < 5; ++drain) EXPECT_FALSE(s.begin_interval());
  EXPECT_EQ(loads, 0);
  EXPECT_EQ(s.reloads(), 0u);
}

TEST(KallsymsSymbolizer, ReloadsOnceWhenTheModuleListChanges) {
  int loads = 0;
  std::string modules = kModulesBefore;
  KallsymsSymbolizer s = symbolizer(modules, loads);
  modules += "mymod 16384 0 - Live 0xffffffffc0001000\n";
  const uint64_t before = s.generation();
  EXPECT_TRUE(s.begin_interval());
  EXPECT_NE(s.generation(), before);  // what was folded before is stale
  EXPECT_EQ(s.name(0xffffffffc0001010), "mod_fn");
  EXPECT_FALSE(s.begin_interval());
  EXPECT_EQ(s.generation(), before + 1);
  EXPECT_EQ(loads, 1);
  EXPECT_EQ(s.reloads(), 1u);
}

TEST(ModuleListSignature, IgnoresReferenceCountsButNotLoadsOrMoves) {
  const std::string before = module_list_signature(kModulesBefore);
  // A socket more or less changes refcounts and users only.
  EXPECT_EQ(
      module_list_signature("nf_tables 348160 3 - Live 0xffffffffc0a00000\n"
                            "libcrc32c 12288 3 nf_tables,xfs,btrfs, Live 0xffffffffc0100000\n"),
      before);
  // Unloaded and loaded again at another address: its old text is somebody else's now.
  EXPECT_NE(module_list_signature("nf_tables 348160 0 - Live 0xffffffffc0b00000\n"
                                  "libcrc32c 12288 2 nf_tables,xfs, Live 0xffffffffc0100000\n"),
            before);
  EXPECT_NE(module_list_signature("nf_tables 348160 0 - Loading 0xffffffffc0a00000\n"
                                  "libcrc32c 12288 2 nf_tables,xfs, Live 0xffffffffc0100000\n"),
            before);
  EXPECT_NE(module_list_signature("libcrc32c 12288 2 nf_tables,xfs, Live 0xffffffffc0100000\n"),
            before);
  EXPECT_EQ(module_list_signature(""), "");
}

}  // namespace
}  // namespace hucprof
