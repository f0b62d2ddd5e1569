// The interrupt entry code the sampler stops at, decided from real kernels' symbol tables:
// Debian's 6.1 and 6.12 for amd64 and arm64 (their System.map, from the -dbg packages, cut down
// by tests/data/interrupt_entries/excerpt.py).
#include "core/kernel/interrupt_entries.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <fstream>
#include <sstream>

#include "core/symbols/stack_interner.h"
#include "kernel_ranges.h"

namespace hucprof {
namespace {

KallsymsIndex load(const std::string& name) {
  std::ifstream in(std::string(HUC_TEST_DATA_DIR) + "/interrupt_entries/" + name);
  EXPECT_TRUE(in) << name;
  return KallsymsIndex::parse(in);
}

// Every address of the symbol's first part inside the ranges (first byte and last byte).
bool covered(const InterruptRanges& r, const KallsymsIndex& k, const char* symbol) {
  auto sym = k.find_exact(symbol);
  EXPECT_TRUE(sym) << symbol << " is not in the excerpt";
  if (!sym) return false;
  const auto& ranges = r.ranges.ranges;
  const auto n = static_cast<__u32>(ranges.size());
  return huc_in_ranges(ranges.data(), n, sym->address) &&
         huc_in_ranges(ranges.data(), n, sym->address + sym->size - 1);
}

bool touched(const InterruptRanges& r, const KallsymsIndex& k, const char* symbol) {
  auto sym = k.find_exact(symbol);
  EXPECT_TRUE(sym) << symbol << " is not in the excerpt";
  if (!sym) return true;
  for (uint64_t a = sym->address; a < sym->address + sym->size; a += 4) {
    if (huc_in_ranges(r.ranges.ranges.data(), static_cast<__u32>(r.ranges.ranges.size()), a)) {
      return true;
    }
  }
  return false;
}

class X86Kernels : public testing::TestWithParam<const char*> {};

TEST_P(X86Kernels, EntryStubsAndSoftirqsAreInterruptEntriesSyscallsAndChecksAreNot) {
  const KallsymsIndex k = load(GetParam());
  const InterruptRanges r = build_interrupt_ranges(k);
  EXPECT_THAT(r.sections, testing::ElementsAre("__irqentry_text", "__softirqentry_text"));
  EXPECT_EQ(r.ranges.overflow, 0u);
  EXPECT_LE(r.ranges.ranges.size(), 12u) << "entry stubs sit together: few ranges to search";
  for (const char* entry :
       {"asm_sysvec_apic_timer_interrupt", "asm_sysvec_call_function_single",
        "asm_common_interrupt", "asm_exc_page_fault", "asm_exc_int3", "irq_entries_start",
        "__do_softirq", "handle_softirqs", "__irq_exit_rcu", "irq_exit_rcu"}) {
    EXPECT_TRUE(covered(r, k, entry)) << entry;
  }
  // Entry code that is no interrupt (a syscall), the code right after the interrupt stubs, and
  // the checks themselves.
  for (const char* other : {"entry_SYSCALL_64", "do_syscall_64", "common_interrupt_return",
                            "__check_object_size", "__virt_addr_valid", "udp_recvmsg"}) {
    EXPECT_FALSE(touched(r, k, other)) << other;
  }
}

INSTANTIATE_TEST_SUITE_P(Debian, X86Kernels,
                         testing::Values("System.map-6.1.0-57-amd64.excerpt",
                                         "System.map-6.12.117+deb12-amd64.excerpt"));

class Arm64Kernels : public testing::TestWithParam<const char*> {};

TEST_P(Arm64Kernels, El1VectorsHandlersAndSoftirqsAreInterruptEntriesEl0AndChecksAreNot) {
  const KallsymsIndex k = load(GetParam());
  const InterruptRanges r = build_interrupt_ranges(k);
  // arm64's irqentry section holds only the irqchip handlers: the el1h_* vectors are what every
  // interrupt taken in the kernel passes.
  EXPECT_THAT(r.sections, testing::ElementsAre("__irqentry_text", "__softirqentry_text"));
  EXPECT_EQ(r.ranges.overflow, 0u);
  for (const char* entry :
       {"el1h_64_irq", "el1h_64_irq_handler", "el1_interrupt", "el1h_64_fiq", "el1h_64_sync",
        "call_on_irq_stack", "gic_handle_irq", "__do_softirq", "handle_softirqs", "__irq_exit_rcu",
        "irq_exit_rcu", "do_softirq_own_stack"}) {
    EXPECT_TRUE(covered(r, k, entry)) << entry;
  }
  for (const char* other : {"el0t_64_sync", "el0_svc", "invoke_syscall", "ret_to_user",
                            "__entry_text_start", "__check_object_size", "udp_recvmsg"}) {
    EXPECT_FALSE(touched(r, k, other)) << other;
  }
}

INSTANTIATE_TEST_SUITE_P(Debian, Arm64Kernels,
                         testing::Values("System.map-6.1.0-57-arm64.excerpt",
                                         "System.map-6.12.117+deb12-arm64.excerpt"));

TEST(InterruptEntries, WithoutSectionMarkersTheEntryStubsAreFoundByName) {
  std::istringstream in(
      "ffffffff81000000 T _stext\n"
      "ffffffff81000100 T asm_sysvec_apic_timer_interrupt\n"
      "ffffffff81000120 T asm_common_interrupt\n"
      "ffffffff81000190 T entry_SYSCALL_64\n"
      "ffffffff81001000 t handle_softirqs\n"
      "ffffffff81001300 t handle_softirqs.cold\n"
      "ffffffff81001340 t run_ksoftirqd\n"
      "ffffffffc0000000 t asm_sysvec_fake\t[some_module]\n");
  const InterruptRanges r = build_interrupt_ranges(KallsymsIndex::parse(in));
  EXPECT_TRUE(r.sections.empty());
  ASSERT_EQ(r.ranges.ranges.size(), 2u) << "touching ranges merge; modules are left out";
  EXPECT_EQ(r.ranges.ranges[0].start, 0xffffffff81000100u);
  EXPECT_EQ(r.ranges.ranges[0].end, 0xffffffff81000190u);
  EXPECT_EQ(r.ranges.ranges[1].start, 0xffffffff81001000u);
  EXPECT_EQ(r.ranges.ranges[1].end, 0xffffffff81001340u) << ".cold too";
  EXPECT_EQ(r.functions, 4u);
  EXPECT_EQ(r.summary(), "0 sections and 4 entry functions in 2 address ranges");
}

TEST(InterruptEntries, ByNameForStacksWithoutAddresses) {
  const InterruptEntries& e = InterruptEntries::defaults();
  EXPECT_TRUE(e.names("asm_sysvec_call_function_single"));
  EXPECT_TRUE(e.names("handle_softirqs.cold"));
  EXPECT_TRUE(e.names("el1h_64_irq_handler"));
  EXPECT_FALSE(e.names("__check_object_size"));
  EXPECT_FALSE(e.names("do_softirq"));  // the local_bh_enable path: never inside a check
  EXPECT_FALSE(e.names("entry_SYSCALL_64_after_hwframe"));

  StackInterner interner;
  auto stack = [&](std::initializer_list<const char*> leaf_first) {
    ProfileStack s;
    for (const char* f : leaf_first) s.push_back(interner.frame({f, "", 0, 0}));
    return *interner.stack(s);
  };
  EXPECT_TRUE(interrupt_before_check(
      stack({"net_rx_action", "handle_softirqs", "__irq_exit_rcu", "sysvec_apic_timer_interrupt",
             "asm_sysvec_apic_timer_interrupt", "is_vmalloc_addr", "__check_object_size",
             "udp_sendmsg"})));
  EXPECT_FALSE(interrupt_before_check(stack({"__check_object_size", "skb_copy_datagram_iter",
                                             "handle_softirqs", "asm_common_interrupt"})))
      << "a check made inside a softirq is the check's";
  EXPECT_FALSE(interrupt_before_check(stack({"__virt_addr_valid", "__check_object_size"})));
}

}  // namespace
}  // namespace hucprof
