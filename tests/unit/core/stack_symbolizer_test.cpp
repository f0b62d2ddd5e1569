// Kernel stacks → profile stacks: named frames with offsets, the check at the leaf of probe
// stacks, never an address.
#include "core/symbols/stack_symbolizer.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <sstream>

#include "hucprof_abi.h"

namespace hucprof {
namespace {

using ::testing::ElementsAre;

// _stext at 0xffffffff81000000; a BPF program and trampoline live in the "bpf" pseudo-module.
constexpr const char* kKallsyms =
    "ffffffff81000000 T _stext\n"
    "ffffffff81000100 T __check_object_size\n"
    "ffffffff81000200 t _raw_spin_lock\n"
    "ffffffff81000300 T find_vmap_area\n"
    "ffffffff81000400 T udp_recvmsg\n"
    "ffffffff81000600 t check_heap_object.part.0\n"
    "ffffffff81000700 T __sys_recvfrom\n"
    "ffffffff81000800 T _etext\n"
    "ffffffffc0000000 t bpf_prog_6deef7357e7b4530_huc_fentry_check_object_size\t[bpf]\n"
    "ffffffffc0001000 t bpf_trampoline_6442494720\t[bpf]\n";

KallsymsSymbolizer kallsyms() {
  std::istringstream in(kKallsyms);
  return KallsymsSymbolizer(KallsymsIndex::parse(in), std::nullopt, nullptr, nullptr);
}

std::vector<std::string> names(const StackPtr& stack) {
  std::vector<std::string> out;
  for (const auto& f : *stack) out.push_back(f->function);
  return out;
}

constexpr uint64_t kCheckPlus5 = 0xffffffff81000105;
constexpr uint64_t kUdpRecvmsgPlus1a4 = 0xffffffff810005a4;
constexpr uint64_t kSysRecvfromPlus30 = 0xffffffff81000730;
constexpr uint64_t kBpfProg = 0xffffffffc0000040;
constexpr uint64_t kTrampoline = 0xffffffffc0001050;

TEST(StackSymbolizer, ProbeStackStartsAtTheCheckNotAtTheBpfCodeThatTookIt) {
  StackSymbolizer stacks(FoldingRules::defaults());
  auto syms = kallsyms();
  auto stack = stacks.probed(
      {kBpfProg, kTrampoline, kCheckPlus5, kUdpRecvmsgPlus1a4, kSysRecvfromPlus30}, syms);
  EXPECT_THAT(names(stack), ElementsAre("__check_object_size", "udp_recvmsg", "__sys_recvfrom"));
  const ProfileFrame& site = *(*stack)[1];
  EXPECT_EQ(site.offset, 0x1a4u);
  EXPECT_EQ(site.text_offset, 0x5a4u);
  EXPECT_EQ(site.module, "");
}

TEST(StackSymbolizer, ProbeStackWithoutTheCheckGetsItAsLeaf) {
  StackSymbolizer stacks(FoldingRules::defaults());
  auto syms = kallsyms();
  // An unwinder that skipped the traced function, and a lone caller address.
  EXPECT_THAT(names(stacks.probed({kTrampoline, kUdpRecvmsgPlus1a4}, syms)),
              ElementsAre("__check_object_size", "udp_recvmsg"));
  EXPECT_THAT(names(stacks.probed({kUdpRecvmsgPlus1a4}, syms)),
              ElementsAre("__check_object_size", "udp_recvmsg"));
}

TEST(StackSymbolizer, SampledStackKeepsWhatRanBelowTheCheck) {
  StackSymbolizer stacks(FoldingRules::defaults());
  auto syms = kallsyms();
  auto stack = stacks.sampled(
      {0xffffffff81000210, 0xffffffff81000320, kCheckPlus5, kUdpRecvmsgPlus1a4}, syms);
  EXPECT_THAT(names(stack), ElementsAre("_raw_spin_lock", "find_vmap_area", "__check_object_size",
                                        "udp_recvmsg"));
}

TEST(StackSymbolizer, SuffixesAreKeptAndUnknownAddressesAreNamedNotPrinted) {
  StackSymbolizer stacks(FoldingRules::defaults());
  auto syms = kallsyms();
  auto stack = stacks.sampled({0xffffffff81000610, 0xffffffff90000000}, syms);
  EXPECT_THAT(names(stack), ElementsAre("check_heap_object.part.0", "[unknown]"));
  EXPECT_EQ((*stack)[1]->offset, 0u);
  EXPECT_EQ((*stack)[1]->text_offset, 0u);
}

TEST(StackSymbolizer, EqualStacksAreOneObject) {
  StackSymbolizer stacks(FoldingRules::defaults());
  auto syms = kallsyms();
  auto a = stacks.probed({kBpfProg, kCheckPlus5, kUdpRecvmsgPlus1a4}, syms);
  auto b = stacks.probed({kTrampoline, kCheckPlus5, kUdpRecvmsgPlus1a4}, syms);
  EXPECT_EQ(a.get(), b.get());
  auto c = stacks.probed({kCheckPlus5, kUdpRecvmsgPlus1a4 + 1}, syms);
  EXPECT_NE(a.get(), c.get()) << "another offset is another stack";
}

TEST(StackSymbolizer, SubcheckGoesOnTopOfTheChecksStack) {
  StackSymbolizer stacks(FoldingRules::defaults());
  auto syms = kallsyms();
  auto site = stacks.probed({kCheckPlus5, kUdpRecvmsgPlus1a4}, syms);
  EXPECT_THAT(names(stacks.with_subcheck(site, HUC_CHECK_VMALLOC)),
              ElementsAre("find_vmap_area", "__check_object_size", "udp_recvmsg"));
  EXPECT_THAT(names(stacks.with_subcheck(site, HUC_CHECK_SLAB)),
              ElementsAre("__check_heap_object", "__check_object_size", "udp_recvmsg"));
}

TEST(StackSymbolizer, PastTheLimitNewStacksShareTheOverflowStack) {
  StackSymbolizer stacks(FoldingRules::defaults(), 2);
  auto syms = kallsyms();
  auto first = stacks.sampled({kCheckPlus5}, syms);
  auto second = stacks.sampled({kCheckPlus5, kUdpRecvmsgPlus1a4}, syms);
  auto third = stacks.sampled({kCheckPlus5, kSysRecvfromPlus30}, syms);
  EXPECT_FALSE(stacks.is_overflow(first));
  EXPECT_FALSE(stacks.is_overflow(second));
  EXPECT_TRUE(stacks.is_overflow(third));
  EXPECT_THAT(names(third), ElementsAre(StackInterner::kOverflowFunction));
  EXPECT_EQ(stacks.sampled({kCheckPlus5}, syms), first) << "known stacks stay themselves";
}

}  // namespace
}  // namespace hucprof
