#include "core/symbols/symbol_name.h"

#include <gtest/gtest.h>

#include <string>
#include <utility>

namespace hucprof {
namespace {

class NormalizeSymbolTest : public testing::TestWithParam<std::pair<std::string, std::string>> {};

TEST_P(NormalizeSymbolTest, StripsCompilerSuffixes) {
  const auto& [exact, normalized] = GetParam();
  EXPECT_EQ(normalize_symbol(exact), normalized) << exact;
}

INSTANTIATE_TEST_SUITE_P(
    Suffixes, NormalizeSymbolTest,
    testing::Values(std::pair{"__check_object_size", "__check_object_size"},
                    std::pair{"__check_object_size.cold", "__check_object_size"},
                    std::pair{"check_heap_object.part.0", "check_heap_object"},
                    std::pair{"tcp_recvmsg_locked.isra.12", "tcp_recvmsg_locked"},
                    std::pair{"skb_copy_datagram_iter.constprop.0", "skb_copy_datagram_iter"},
                    std::pair{"foo.cold.3", "foo"},
                    std::pair{"foo.llvm.6049402354312934571", "foo"},
                    std::pair{"foo.lto_priv.0", "foo"},
                    // Chains, in the orders GCC and Clang emit them.
                    std::pair{"foo.isra.0.cold", "foo"}, std::pair{"foo.constprop.0.isra.0", "foo"},
                    std::pair{"foo.part.0.constprop.1.cold", "foo"},
                    std::pair{"foo.llvm.123.cold", "foo"}));

INSTANTIATE_TEST_SUITE_P(
    LeftAlone, NormalizeSymbolTest,
    testing::Values(
        // Not a compiler tag, or a tag without its number: keep the name as the kernel spells it.
        std::pair{"foo.12", "foo.12"}, std::pair{"foo.part", "foo.part"},
        std::pair{"foo.isra.x", "foo.isra.x"},
        std::pair{"descriptor.cold_path", "descriptor.cold_path"},
        std::pair{"__pfx_usercopy_abort", "__pfx_usercopy_abort"},
        // Nothing would be left: no function is named after its tag.
        std::pair{".cold", ".cold"}, std::pair{".part.0", ".part.0"}, std::pair{"", ""},
        // Only real suffixes come off; an unknown tag stops the stripping.
        std::pair{"foo.unknown.cold", "foo.unknown"}));

TEST(NormalizeSymbol, ReturnsViewIntoInput) {
  std::string exact = "udp_recvmsg.isra.0";
  std::string_view normalized = normalize_symbol(exact);
  EXPECT_EQ(normalized.data(), exact.data());
  EXPECT_EQ(normalized, "udp_recvmsg");
}

}  // namespace
}  // namespace hucprof
