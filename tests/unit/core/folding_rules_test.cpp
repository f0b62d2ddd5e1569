#include "core/symbols/folding_rules.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "core/symbols/symbol_name.h"

namespace hucprof {
namespace {

// Each step is named after the function whose time it is: mm/usercopy.c runs
// __virt_addr_valid for every object in the linear map or the kernel image, slab ones included,
// so its time is no "page" object's.
TEST(FoldingRules, CheckFunctionSteps) {
  const auto rules = FoldingRules::defaults();
  const std::vector<std::pair<std::string, std::string>> expected = {
      {"__check_object_size", "entry"},
      {"check_heap_object", "heap_object"},
      {"__check_heap_object", "slab_object"},
      {"find_vmap_area", "vmap_area"},
      {"check_stack_object", "stack_object"},
      {"check_kernel_text_object", "kernel_text"},
      {"__virt_addr_valid", "virt_addr_valid"},
      {"check_page_span", "page_span"},
      {"usercopy_abort", "entry"},
      {"usercopy_warn", "entry"},
  };
  for (const auto& [name, kind] : expected) {
    auto it = rules.check_functions.find(name);
    ASSERT_NE(it, rules.check_functions.end()) << name;
    EXPECT_EQ(it->second, kind) << name;
  }
}

// docs/metrics.md's table of step values.
TEST(FoldingRules, StepsAreTheMetricContractLabels) {
  const std::set<std::string> allowed = {"entry",       "stack_object",    "heap_object",
                                         "vmap_area",   "virt_addr_valid", "slab_object",
                                         "kernel_text", "page_span"};
  for (const auto& [name, kind] : FoldingRules::defaults().check_functions) {
    EXPECT_TRUE(allowed.contains(kind)) << name << " → " << kind;
  }
}

TEST(FoldingRules, CopyHelpersFromTheDesign) {
  const auto rules = FoldingRules::defaults();
  for (const char* helper : {"check_copy_size",
                             "copy_to_iter",
                             "_copy_to_iter",
                             "copy_from_iter",
                             "_copy_from_iter",
                             "_copy_from_iter_nocache",
                             "copy_from_iter_full",
                             "copy_to_user",
                             "_copy_to_user",
                             "copy_from_user",
                             "_copy_from_user",
                             "copy_page_to_iter",
                             "copy_page_from_iter",
                             "copy_page_from_iter_atomic",
                             "simple_copy_to_iter",
                             "__skb_datagram_iter",
                             "skb_copy_datagram_iter",
                             "skb_copy_datagram_from_iter",
                             "skb_copy_and_csum_datagram",
                             "skb_copy_and_csum_datagram_msg",
                             "copy_linear_skb",
                             "memcpy_to_msg",
                             "memcpy_from_msg",
                             "ip_generic_getfrag",
                             "ip_append_data",
                             "__ip_append_data",
                             "ip_make_skb",
                             "ip6_append_data",
                             "__ip6_append_data",
                             "ip6_make_skb",
                             "csum_and_copy_from_iter_full",
                             "csum_and_copy_to_iter",
                             "copy_struct_from_user",
                             "strncpy_from_user",
                             "put_cmsg",
                             "move_addr_to_user",
                             "move_addr_to_kernel",
                             "iterate_iovec",
                             "iterate_and_advance",
                             "__copy_from_user_inatomic"}) {
    EXPECT_TRUE(rules.copy_helpers.contains(helper)) << helper;
  }
}

// A subsystem function is what an operator needs to see; treating one as plumbing would hide
// the answer to "which copy is hot".
TEST(FoldingRules, SubsystemFunctionsAreNotHelpers) {
  const auto rules = FoldingRules::defaults();
  for (const char* site : {"udp_recvmsg",         "udp_sendmsg",        "udpv6_recvmsg",
                           "netlink_recvmsg",     "netlink_sendmsg",    "tcp_recvmsg_locked",
                           "tcp_recvmsg",         "tcp_sendmsg_locked", "unix_stream_read_generic",
                           "unix_stream_sendmsg", "inet_recvmsg",       "sock_recvmsg",
                           "__sys_recvfrom",      "cp_new_stat",        "filldir64",
                           "do_sys_poll",         "raw_sendmsg",        "packet_recvmsg",
                           "pipe_read",           "pipe_write",         "do_syscall_64"}) {
    EXPECT_FALSE(rules.copy_helpers.contains(site)) << site;
    EXPECT_FALSE(rules.check_functions.contains(site)) << site;
  }
}

TEST(FoldingRules, NamesAreNormalizedAndInOneListOnly) {
  const auto rules = FoldingRules::defaults();
  for (const auto& [name, kind] : rules.check_functions) {
    EXPECT_EQ(normalize_symbol(name), name);
    EXPECT_FALSE(rules.copy_helpers.contains(name)) << name << " is both check and helper";
  }
  for (const auto& name : rules.copy_helpers) EXPECT_EQ(normalize_symbol(name), name);
}

}  // namespace
}  // namespace hucprof
