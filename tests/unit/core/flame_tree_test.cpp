// Stacks merged into a flame graph's tree, from the root.
#include "core/profile/flame_tree.h"

#include <gtest/gtest.h>

#include "core/symbols/stack_interner.h"

namespace hucprof {
namespace {

class FlameTreeTest : public testing::Test {
 protected:
  ProfileSample sample(std::initializer_list<const char*> leaf_first, uint64_t n) {
    ProfileStack s;
    for (const char* f : leaf_first) s.push_back(interner_.frame({f, "", 0, 0}));
    ProfileSample out{interner_.stack(s), make_labels({}), {}};
    out.values[kSamples] = n;
    return out;
  }
  StackInterner interner_;
};

TEST_F(FlameTreeTest, MergesFromTheRootByNameWithChildrenInNameOrder) {
  StackProfile p;
  p.samples = {
      sample({"__virt_addr_valid", "__check_object_size", "udp_recvmsg", "__sys_recvfrom"}, 3),
      sample({"__check_object_size", "udp_recvmsg", "__sys_recvfrom"}, 2),
      sample({"__check_object_size.cold", "tcp_recvmsg", "__sys_recvfrom"}, 1),
      sample({"_copy_to_user", "x"}, 0)};
  const FlameNode root = build_flame_tree(p, kSamples, FoldingRules::defaults(), "all");
  EXPECT_EQ(root.name, "all");
  EXPECT_EQ(root.kind, FrameKind::Root);
  EXPECT_EQ(root.value, 6u);
  ASSERT_EQ(root.children.size(), 1u) << "a zero-valued sample adds nothing";
  const FlameNode& sys = root.children[0];
  EXPECT_EQ(sys.name, "__sys_recvfrom");
  EXPECT_EQ(sys.value, 6u);
  ASSERT_EQ(sys.children.size(), 2u);
  EXPECT_EQ(sys.children[0].name, "tcp_recvmsg");
  EXPECT_EQ(sys.children[1].name, "udp_recvmsg");
  const FlameNode& check = sys.children[1].children.at(0);
  EXPECT_EQ(check.name, "__check_object_size");
  EXPECT_EQ(check.kind, FrameKind::Check);
  EXPECT_EQ(check.value, 5u);
  EXPECT_EQ(check.children.at(0).value, 3u);
  EXPECT_EQ(check.children.at(0).kind, FrameKind::Check) << "what a check calls is the check";
  EXPECT_EQ(sys.children[0].children.at(0).kind, FrameKind::Check) << "suffixed name";
  EXPECT_EQ(flame_depth(root), 5u);
}

TEST_F(FlameTreeTest, AnInterruptInACheckIsKernelNotTheCheck) {
  StackProfile p;
  p.samples = {sample({"net_rx_action", "handle_softirqs", "__irq_exit_rcu",
                       "sysvec_call_function_single", "asm_sysvec_call_function_single",
                       "__virt_addr_valid", "__check_object_size", "udp_recvmsg"},
                      1)};
  const FlameNode root = build_flame_tree(p, kSamples, FoldingRules::defaults(), "all");
  const FlameNode* at = &root.children.at(0);  // udp_recvmsg
  std::vector<std::pair<std::string, FrameKind>> path;
  while (!at->children.empty()) {
    at = &at->children.at(0);
    path.emplace_back(at->name, at->kind);
  }
  EXPECT_EQ(path, (std::vector<std::pair<std::string, FrameKind>>{
                      {"__check_object_size", FrameKind::Check},
                      {"__virt_addr_valid", FrameKind::Check},
                      {"asm_sysvec_call_function_single", FrameKind::Kernel},
                      {"sysvec_call_function_single", FrameKind::Kernel},
                      {"__irq_exit_rcu", FrameKind::Kernel},
                      {"handle_softirqs", FrameKind::Kernel},
                      {"net_rx_action", FrameKind::Kernel}}));
}

TEST_F(FlameTreeTest, HelpersAreMarkedAndOtherValuesSelectable) {
  StackProfile p;
  ProfileSample s = sample({"__check_object_size", "simple_copy_to_iter", "netlink_recvmsg"}, 0);
  s.values[kCalls] = 7;
  p.samples = {s};
  const FlameNode root = build_flame_tree(p, kCalls, FoldingRules::defaults(), "all");
  EXPECT_EQ(root.value, 7u);
  EXPECT_EQ(root.children.at(0).kind, FrameKind::Kernel);
  EXPECT_EQ(root.children.at(0).children.at(0).kind, FrameKind::CopyHelper);
  EXPECT_EQ(build_flame_tree(p, kSamples, FoldingRules::defaults(), "all").value, 0u);
}

TEST_F(FlameTreeTest, AbsurdlyDeepStacksAreCut) {
  StackProfile p;
  ProfileStack deep;
  for (int i = 0; i < 10000; ++i)
    deep.push_back(interner_.frame({"f" + std::to_string(i), "", 0, 0}));
  ProfileSample s{interner_.stack(deep), make_labels({}), {}};
  s.values[kSamples] = 1;
  p.samples = {s};
  EXPECT_EQ(flame_depth(build_flame_tree(p, kSamples, FoldingRules::defaults(), "all")),
            kMaxFlameDepth + 1);
}

}  // namespace
}  // namespace hucprof
