// The decision numbers from a profile: share of busy CPU (the headline), of busy kernel CPU,
// cores, per call site and stack.
#include "core/cost/usercopy_cost.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "core/symbols/stack_interner.h"

namespace hucprof {
namespace {

using ::testing::ElementsAre;
using ::testing::Pair;

class UsercopyCostTest : public testing::Test {
 protected:
  StackPtr stack(std::initializer_list<std::pair<const char*, uint64_t>> frames) {
    ProfileStack s;
    for (const auto& [name, offset] : frames) s.push_back(interner_.frame({name, "", offset, 0}));
    return interner_.stack(s);
  }
  ProfileSample sampled(StackPtr s, const char* callsite, const char* syscall, const char* check,
                        uint64_t n) {
    ProfileSample out{std::move(s), make_labels({callsite, syscall, check, ""}), {}};
    out.values[kSamples] = n;
    return out;
  }
  // 1 ms per sample, 10 s window, 4000 kernel samples = 4 s of busy kernel CPU.
  StackProfile sampling_profile() {
    StackProfile p;
    p.sampling = true;
    p.sample_period_ns = 1'000'000;
    p.duration_ns = 10'000'000'000;
    p.sampled_by_context = {{"kernel", 4000}, {"user", 3000}, {"idle", 13000}};
    auto udp_page =
        stack({{"__virt_addr_valid", 0}, {"__check_object_size", 0}, {"udp_recvmsg", 0}});
    auto udp_page_other_offset =
        stack({{"__virt_addr_valid", 8}, {"__check_object_size", 0}, {"udp_recvmsg", 0}});
    auto udp_obj = stack({{"__check_object_size", 0}, {"udp_recvmsg", 0}});
    auto tcp = stack({{"__check_object_size", 0}, {"tcp_recvmsg", 0}});
    p.samples = {sampled(udp_page, "udp_recvmsg", "recvfrom", "page", 120),
                 sampled(udp_page_other_offset, "udp_recvmsg", "recvfrom", "page", 30),
                 sampled(udp_obj, "udp_recvmsg", "recvfrom", "object", 50),
                 sampled(tcp, "tcp_recvmsg", "read", "object", 40),
                 sampled(udp_obj, "udp_recvmsg", "recvmsg", "object", 10)};
    return p;
  }
  StackInterner interner_;
};

TEST_F(UsercopyCostTest, ShareOfBusyCpuThenOfBusyKernelCpuAndCores) {
  const UsercopyCost cost = summarize_cost(sampling_profile());
  EXPECT_DOUBLE_EQ(cost.kernel_cpu_seconds, 4.0);
  EXPECT_DOUBLE_EQ(cost.user_cpu_seconds, 3.0);
  EXPECT_DOUBLE_EQ(cost.check_cpu_seconds, 0.25);  // 250 samples x 1 ms
  EXPECT_EQ(cost.check_samples, 250u);
  EXPECT_EQ(cost.busy_samples(), 7000u) << "kernel + user; idle is not busy";
  ASSERT_TRUE(cost.share_of_busy());
  EXPECT_DOUBLE_EQ(*cost.share_of_busy(), 250.0 / 7000);
  ASSERT_TRUE(cost.share_of_kernel());
  EXPECT_DOUBLE_EQ(*cost.share_of_kernel(), 0.25 / 4.0);
  ASSERT_TRUE(cost.cores());
  EXPECT_DOUBLE_EQ(*cost.cores(), 0.025);
}

TEST_F(UsercopyCostTest, InterruptsCountedAtTheSourceAreKernelCpuNotTheChecks) {
  StackProfile p = sampling_profile();
  p.excluded_samples = {{"interrupt", 70}};
  const UsercopyCost cost = summarize_cost(p);
  EXPECT_EQ(cost.interrupt_samples, 70u);
  EXPECT_DOUBLE_EQ(cost.interrupt_cpu_seconds, 0.07);
  EXPECT_EQ(cost.check_samples, 250u);
  EXPECT_EQ(cost.busy_samples(), 7000u) << "already in the kernel context's samples";
}

TEST_F(UsercopyCostTest, AnInterruptStackAboveACheckIsNotTheChecks) {
  // A profile the sampler did not filter (an older file): the same rule by names. A softirq on
  // top of the check is kernel CPU; a check made inside a softirq is the check's.
  StackProfile p = sampling_profile();
  p.samples.push_back(sampled(stack({{"net_rx_action", 0},
                                     {"handle_softirqs", 0},
                                     {"__irq_exit_rcu", 0},
                                     {"sysvec_call_function_single", 0},
                                     {"asm_sysvec_call_function_single", 0},
                                     {"__virt_addr_valid", 0},
                                     {"__check_object_size", 0},
                                     {"udp_recvmsg", 0}}),
                              "udp_recvmsg", "recvfrom", "page", 25));
  p.samples.push_back(sampled(stack({{"__check_object_size", 0},
                                     {"tcp_recvmsg", 0},
                                     {"handle_softirqs", 0},
                                     {"asm_sysvec_apic_timer_interrupt", 0}}),
                              "tcp_recvmsg", "none", "object", 5));
  const UsercopyCost cost = summarize_cost(p);
  EXPECT_EQ(cost.interrupt_samples, 25u);
  EXPECT_EQ(cost.check_samples, 255u);
  EXPECT_EQ(cost.callsites[0].samples, 200u) << "udp_recvmsg/recvfrom keeps only its own";
}

TEST_F(UsercopyCostTest, RowsPerCallsiteAndSyscallCostliestFirst) {
  const UsercopyCost cost = summarize_cost(sampling_profile());
  ASSERT_EQ(cost.callsites.size(), 3u);
  const CallsiteCost& top = cost.callsites[0];
  EXPECT_EQ(top.callsite, "udp_recvmsg");
  EXPECT_EQ(top.syscall, "recvfrom");
  EXPECT_EQ(top.samples, 200u);
  EXPECT_DOUBLE_EQ(top.cpu_seconds, 0.2);
  EXPECT_DOUBLE_EQ(*top.share, 200.0 / 7000) << "of busy CPU, as the headline";
  EXPECT_THAT(top.checks, ElementsAre(Pair("page", 150u), Pair("object", 50u)));
  EXPECT_EQ(cost.callsites[1].callsite, "tcp_recvmsg");
  EXPECT_EQ(cost.callsites[2].syscall, "recvmsg");
}

TEST_F(UsercopyCostTest, StacksThatDifferOnlyInOffsetsAreOneStack) {
  const UsercopyCost cost = summarize_cost(sampling_profile());
  const CallsiteCost& top = cost.callsites[0];
  ASSERT_EQ(top.top_stacks.size(), 2u);
  EXPECT_EQ(top.top_stacks[0].value, 150u);
  EXPECT_EQ((*top.top_stacks[0].stack)[0]->function, "__virt_addr_valid");
  EXPECT_EQ(top.top_stacks[1].value, 50u);
  EXPECT_EQ(summarize_cost(sampling_profile(), 1).callsites[0].top_stacks.size(), 1u);
}

TEST_F(UsercopyCostTest, ProbeProfileRanksByCallsAndSplitsSubchecksPerRow) {
  StackProfile p;
  p.probes = true;
  p.duration_ns = 5'000'000'000;
  auto udp = stack({{"__check_object_size", 0}, {"udp_recvmsg", 0}});
  auto sendmsg = stack({{"__check_object_size", 0}, {"udp_sendmsg", 0}});
  ProfileSample a{udp, make_labels({"udp_recvmsg", "recvfrom", "", "to_user"}), {}};
  a.values[kCalls] = 1000;
  a.values[kBytes] = 64000;
  ProfileSample b{sendmsg, make_labels({"udp_sendmsg", "sendto", "", "from_user"}), {}};
  b.values[kCalls] = 3000;
  b.values[kBytes] = 192000;
  ProfileSample slab{
      stack({{"__check_heap_object", 0}, {"__check_object_size", 0}, {"udp_recvmsg", 0}}),
      make_labels({"udp_recvmsg", "recvfrom", "slab", "to_user"}),
      {}};
  slab.values[kSubchecks] = 900;
  p.samples = {a, b, slab};
  const UsercopyCost cost = summarize_cost(p);
  EXPECT_FALSE(cost.share_of_busy()) << "no sampling: no share";
  EXPECT_FALSE(cost.share_of_kernel());
  EXPECT_FALSE(cost.cores());
  EXPECT_EQ(cost.calls, 4000u);
  EXPECT_EQ(cost.bytes, 256000u);
  ASSERT_EQ(cost.callsites.size(), 2u);
  EXPECT_EQ(cost.callsites[0].callsite, "udp_sendmsg");
  EXPECT_THAT(cost.callsites[1].checks, ElementsAre(Pair("slab", 900u)));
  EXPECT_EQ(cost.callsites[1].top_stacks.size(), 1u) << "sub-check stacks carry no calls";
}

TEST_F(UsercopyCostTest, NoBusyTimeNoShare) {
  StackProfile p = sampling_profile();
  p.sampled_by_context = {{"idle", 100}};
  EXPECT_FALSE(summarize_cost(p).share_of_busy());
  EXPECT_FALSE(summarize_cost(p).share_of_kernel());
  p.duration_ns = 0;
  EXPECT_FALSE(summarize_cost(p).cores());
  EXPECT_TRUE(summarize_cost(StackProfile{}).callsites.empty());
}

}  // namespace
}  // namespace hucprof
