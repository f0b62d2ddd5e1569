#include "core/symbols/callsite_folder.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace hucprof {
namespace {

class CallsiteFolderTest : public testing::Test {
 protected:
  FoldedCallsite fold(const std::vector<std::string>& frames_leaf_first) const {
    return folder_.fold(frames_leaf_first);
  }
  CallsiteFolder folder_{FoldingRules::defaults()};
};

// The chain from the LKML report: copy_to_iter and check_copy_size are inlined into
// udp_recvmsg, so __check_object_size is called from udp_recvmsg directly.
TEST_F(CallsiteFolderTest, SeedUdpRecvChain) {
  auto folded =
      fold({"__check_object_size", "udp_recvmsg", "inet_recvmsg", "sock_recvmsg", "__sys_recvfrom",
            "__x64_sys_recvfrom", "do_syscall_64", "entry_SYSCALL_64_after_hwframe"});
  EXPECT_EQ(folded.callsite, "udp_recvmsg");
  EXPECT_EQ(folded.syscall, "recvfrom");
  EXPECT_EQ(folded.step, "entry");
  EXPECT_FALSE(folded.truncated);
}

TEST_F(CallsiteFolderTest, NetlinkVmallocChainSkipsCopyHelpers) {
  auto folded =
      fold({"find_vmap_area", "__check_object_size", "simple_copy_to_iter", "__skb_datagram_iter",
            "skb_copy_datagram_iter", "netlink_recvmsg", "sock_recvmsg", "____sys_recvmsg",
            "___sys_recvmsg", "__sys_recvmsg", "do_syscall_64"});
  EXPECT_EQ(folded.callsite, "netlink_recvmsg");
  EXPECT_EQ(folded.step, "vmap_area");
  EXPECT_EQ(folded.syscall, "recvmsg");
  EXPECT_FALSE(folded.truncated);
}

// A CPU sample lands in whatever the check called; that time is still the check's.
TEST_F(CallsiteFolderTest, SampleInsideCalleeOfCheckCountsAsTheCheck) {
  auto folded =
      fold({"native_queued_spin_lock_slowpath", "_raw_spin_lock", "find_vmap_area",
            "__check_object_size", "simple_copy_to_iter", "__skb_datagram_iter",
            "skb_copy_datagram_iter", "netlink_recvmsg", "sock_recvmsg", "____sys_recvmsg",
            "___sys_recvmsg", "__sys_recvmsg", "__x64_sys_recvmsg", "do_syscall_64"});
  EXPECT_EQ(folded.callsite, "netlink_recvmsg");
  EXPECT_EQ(folded.step, "vmap_area");
  EXPECT_EQ(folded.syscall, "recvmsg");
}

TEST_F(CallsiteFolderTest, SendSideSkipsIpAppendPlumbing) {
  auto folded = fold({"__check_object_size", "ip_generic_getfrag", "__ip_append_data",
                      "ip_make_skb", "udp_sendmsg", "__sys_sendto", "__x64_sys_sendto",
                      "do_syscall_64", "entry_SYSCALL_64_after_hwframe"});
  EXPECT_EQ(folded.callsite, "udp_sendmsg");
  EXPECT_EQ(folded.syscall, "sendto");
  EXPECT_EQ(folded.step, "entry");
}

TEST_F(CallsiteFolderTest, InnermostCheckGivesTheKind) {
  auto page = fold({"__virt_addr_valid", "__check_object_size", "udp_recvmsg"});
  EXPECT_EQ(page.step, "virt_addr_valid");
  EXPECT_EQ(page.callsite, "udp_recvmsg");
  auto slab = fold(
      {"__check_heap_object", "check_heap_object", "__check_object_size", "tcp_recvmsg_locked"});
  EXPECT_EQ(slab.step, "slab_object");
  EXPECT_EQ(slab.callsite, "tcp_recvmsg_locked");
  auto stack =
      fold({"check_stack_object", "__check_object_size", "_copy_from_user", "do_sys_poll"});
  EXPECT_EQ(stack.step, "stack_object");
  EXPECT_EQ(stack.callsite, "do_sys_poll");
}

TEST_F(CallsiteFolderTest, StackEndingInsideTheMachineryIsTruncated) {
  auto folded =
      fold({"find_vmap_area", "__check_object_size", "simple_copy_to_iter", "__skb_datagram_iter"});
  EXPECT_TRUE(folded.truncated);
  EXPECT_EQ(folded.callsite, "[truncated]");
  EXPECT_EQ(folded.step, "vmap_area");
  EXPECT_EQ(folded.syscall, "none");

  auto only_check = fold({"__check_object_size"});
  EXPECT_TRUE(only_check.truncated);
  EXPECT_EQ(only_check.callsite, "[truncated]");
  EXPECT_EQ(only_check.step, "entry");

  auto empty = fold({});
  EXPECT_TRUE(empty.truncated);
  EXPECT_EQ(empty.callsite, "[truncated]");
  EXPECT_EQ(empty.step, "");
}

TEST_F(CallsiteFolderTest, SuffixedNamesAreNormalizedBeforeMatching) {
  auto folded =
      fold({"check_heap_object.part.0", "__check_object_size.cold", "_copy_to_iter.isra.0",
            "tcp_recvmsg_locked.constprop.0", "tcp_recvmsg", "inet_recvmsg", "sock_recvmsg",
            "__sys_recvfrom.isra.0", "__x64_sys_recvfrom"});
  EXPECT_EQ(folded.callsite, "tcp_recvmsg_locked");
  EXPECT_EQ(folded.step, "heap_object");
  EXPECT_EQ(folded.syscall, "recvfrom");
  EXPECT_FALSE(folded.truncated);
}

// Probe mode hands over the caller frames only.
TEST_F(CallsiteFolderTest, ProbeModeCallerFrames) {
  auto direct = fold({"udp_recvmsg"});
  EXPECT_EQ(direct.callsite, "udp_recvmsg");
  EXPECT_EQ(direct.step, "");
  EXPECT_EQ(direct.syscall, "none");
  EXPECT_FALSE(direct.truncated);

  auto via_helper = fold({"simple_copy_to_iter", "__skb_datagram_iter", "skb_copy_datagram_iter",
                          "unix_stream_read_actor", "unix_stream_read_generic"});
  EXPECT_EQ(via_helper.callsite, "unix_stream_read_actor");
  EXPECT_EQ(via_helper.step, "");

  auto helper_only = fold({"simple_copy_to_iter"});
  EXPECT_TRUE(helper_only.truncated);
  EXPECT_EQ(helper_only.callsite, "[truncated]");
}

TEST_F(CallsiteFolderTest, SyscallNameForms) {
  EXPECT_EQ(fold({"udp_recvmsg", "__sys_recvfrom"}).syscall, "recvfrom");
  EXPECT_EQ(fold({"_copy_to_user", "cp_new_stat", "ksys_read"}).syscall, "read");
  EXPECT_EQ(fold({"x", "ksys_read", "__x64_sys_read", "x64_sys_call", "do_syscall_64"}).syscall,
            "read");
  EXPECT_EQ(fold({"x", "__do_sys_newfstatat", "__se_sys_newfstatat"}).syscall, "newfstatat");
  EXPECT_EQ(fold({"x", "do_sys_openat2", "__ia32_sys_openat"}).syscall, "openat");
  EXPECT_EQ(fold({"x", "do_sys_poll"}).syscall, "poll");
  // arm64: el0_svc -> do_el0_svc -> el0_svc_common -> invoke_syscall -> __arm64_sys_X.
  EXPECT_EQ(fold({"x", "__sys_recvfrom", "__arm64_sys_recvfrom", "invoke_syscall", "el0_svc_common",
                  "do_el0_svc", "el0_svc"})
                .syscall,
            "recvfrom");
  // x64_sys_call is the dispatcher, not a syscall named "call".
  EXPECT_EQ(fold({"x", "x64_sys_call", "do_syscall_64"}).syscall, "none");
  // ____sys_recvmsg / ___sys_recvmsg are helpers, not __sys_ with a leading "__".
  EXPECT_EQ(fold({"x", "____sys_recvmsg", "___sys_recvmsg"}).syscall, "none");
}

// The 32-bit socketcall multiplexer reaches __sys_recvfrom through socketcall: the outermost
// entry stub names what user space called.
TEST_F(CallsiteFolderTest, OutermostEntryStubWins) {
  auto folded =
      fold({"__check_object_size", "udp_recvmsg", "inet_recvmsg", "sock_recvmsg", "__sys_recvfrom",
            "__do_compat_sys_socketcall", "__ia32_compat_sys_socketcall", "do_int80_emulation"});
  EXPECT_EQ(folded.syscall, "socketcall");
  // An implementation frame outside a stub does not override the stub.
  EXPECT_EQ(fold({"x", "__x64_sys_read", "ksys_write"}).syscall, "read");
}

TEST_F(CallsiteFolderTest, CustomRulesAreData) {
  FoldingRules rules;
  rules.check_functions = {{"my_check", "object"}};
  rules.copy_helpers = {"my_helper"};
  CallsiteFolder folder(rules);
  std::vector<std::string> frames = {"my_check", "my_helper", "__check_object_size", "caller"};
  auto folded = folder.fold(frames);
  EXPECT_EQ(folded.callsite, "__check_object_size");
  EXPECT_EQ(folded.step, "object");
}

// The numbers are the kernel's syscall ABI of the architecture the test is built for.
#if defined(__x86_64__)
TEST(SyscallName, KnownNumbers) {
  EXPECT_EQ(syscall_name(45), "recvfrom");
  EXPECT_EQ(syscall_name(0), "read");
  EXPECT_EQ(syscall_name(44), "sendto");
  EXPECT_EQ(syscall_name(47), "recvmsg");
}

#elif defined(__aarch64__)
TEST(SyscallName, KnownNumbers) {
  EXPECT_EQ(syscall_name(207), "recvfrom");
  EXPECT_EQ(syscall_name(63), "read");
  EXPECT_EQ(syscall_name(206), "sendto");
  EXPECT_EQ(syscall_name(212), "recvmsg");
  // asm-generic numbers these through __NR3264_* aliases; arm64 has the 64-bit names.
  EXPECT_EQ(syscall_name(25), "fcntl");
  EXPECT_EQ(syscall_name(79), "newfstatat");
  EXPECT_EQ(syscall_name(222), "mmap");
  // arm64 does not want sync_file_range2.
  EXPECT_EQ(syscall_name(84), "sync_file_range");
}
#else
#error "syscall numbers are known for x86_64 and aarch64"
#endif

TEST(SyscallName, UnknownNumbers) {
  EXPECT_EQ(syscall_name(-1), std::nullopt);
  EXPECT_EQ(syscall_name(400), std::nullopt);  // unused: x86_64 335..423, arm64 294..423
  EXPECT_EQ(syscall_name(100000), std::nullopt);
}

}  // namespace
}  // namespace hucprof
