#include "core/symbols/kallsyms_index.h"

#include <gtest/gtest.h>

#include <fstream>
#include <sstream>

namespace hucprof {
namespace {

// Layout under test (text symbols only; d/D/b/A lines must neither appear nor shorten sizes):
//   _stext/startup_64  0xffffffff81000000  aliases, size 0x100
//   __check_object_size 0x...100, size 0x100 (the data symbol at 0x...180 does not end it)
//   __check_object_size.cold 0x...200, size 0x40
//   weak_fn (W)         0x...240, size 0xc0
//   _etext              0x...300, end of text: covers nothing
//   nft_do_chain [nf_tables] 0xffffffffc0a01000, size 0x400
//   nft_other [nf_tables]    0xffffffffc0a01400, next symbol is another module: size 4096
//   udp_tunnel_x [udp_tunnel] 0xffffffffc0b00000, last symbol: size 4096
constexpr const char* kKallsyms =
    "0000000000000000 A fixed_percpu_data\n"
    "ffffffffc0a01400 T nft_other\t[nf_tables]\n"  // modules need not come in address order
    "ffffffffc0a01000 t nft_do_chain\t[nf_tables]\n"
    "ffffffff81000000 t startup_64\n"
    "ffffffff81000000 T _stext\n"
    "ffffffff81000100 T __check_object_size\n"
    "ffffffff81000180 d some_data\n"
    "ffffffff81000200 t __check_object_size.cold\n"
    "ffffffff81000240 W weak_fn\n"
    "ffffffff81000300 T _etext\n"
    "ffffffff82000000 D data_sym\n"
    "ffffffff82000100 b bss_sym\n"
    "\n"
    "not a kallsyms line\n"
    "zzzzzzzzzzzzzzzz T bad_address\n"
    "ffffffffc0b00000 t udp_tunnel_x\t[udp_tunnel]\n";

KallsymsIndex parse(const std::string& text) {
  std::istringstream in(text);
  return KallsymsIndex::parse(in);
}

class KallsymsIndexTest : public testing::Test {
 protected:
  KallsymsIndex index_ = parse(kKallsyms);
};

TEST_F(KallsymsIndexTest, KeepsTextSymbolsOnly) {
  EXPECT_EQ(index_.size(), 9u);
  EXPECT_FALSE(index_.addresses_hidden());
  EXPECT_FALSE(index_.find_exact("some_data"));
  EXPECT_FALSE(index_.find_exact("data_sym"));
  EXPECT_FALSE(index_.find_exact("bss_sym"));
  EXPECT_FALSE(index_.find_exact("fixed_percpu_data"));
  EXPECT_FALSE(index_.find_exact("bad_address"));
  ASSERT_TRUE(index_.find_exact("weak_fn"));
  EXPECT_EQ(index_.find_exact("weak_fn")->address, 0xffffffff81000240u);
}

// THREAD_SIZE: the first task's stack, as Debian 11's 5.10.0-32 lists it (16 KiB), is the one
// pair of data symbols the index keeps; without either, or from a module, it is unknown.
TEST_F(KallsymsIndexTest, TaskStackSizeFromTheInitTaskDataSymbols) {
  auto parse = [](const char* text) {
    std::istringstream in(text);
    return KallsymsIndex::parse(in);
  };
  constexpr const char* k510 =
      "ffffffffa9000000 T _stext\n"
      "ffffffffab200000 D init_stack\n"
      "ffffffffab200000 D __start_init_task\n"
      "ffffffffab204000 D __end_init_task\n";
  EXPECT_EQ(parse(k510).task_stack_size(), 16384u);
  EXPECT_EQ(parse("ffffffffab200000 D __start_init_task\n").task_stack_size(), 0u);
  EXPECT_EQ(parse("ffffffffab204000 D __end_init_task\nffffffffab200000 D __start_init_task\n")
                .task_stack_size(),
            16384u);
  EXPECT_EQ(parse("ffffffffab200000 D __start_init_task\nffffffffab204000 T __end_init_task\n")
                .task_stack_size(),
            0u);
  EXPECT_EQ(parse(kKallsyms).task_stack_size(), 0u);
}

TEST_F(KallsymsIndexTest, SizeIsDistanceToNextTextSymbol) {
  EXPECT_EQ(index_.find_exact("__check_object_size")->size, 0x100u);
  EXPECT_EQ(index_.find_exact("__check_object_size.cold")->size, 0x40u);
  EXPECT_EQ(index_.find_exact("weak_fn")->size, 0xc0u);
  EXPECT_EQ(index_.find_exact("nft_do_chain")->size, 0x400u);
  // Aliases share the size of their address.
  EXPECT_EQ(index_.find_exact("startup_64")->size, 0x100u);
  EXPECT_EQ(index_.find_exact("_stext")->size, 0x100u);
}

TEST_F(KallsymsIndexTest, ResolvesAtStartMiddleAndLastByte) {
  auto start = index_.resolve(0xffffffff81000100);
  ASSERT_TRUE(start);
  EXPECT_EQ(start->name, "__check_object_size");
  EXPECT_EQ(start->module, "");
  EXPECT_EQ(start->offset, 0u);

  auto middle = index_.resolve(0xffffffff81000185);  // past the ignored data symbol
  ASSERT_TRUE(middle);
  EXPECT_EQ(middle->name, "__check_object_size");
  EXPECT_EQ(middle->offset, 0x85u);

  auto last = index_.resolve(0xffffffff810001ff);
  ASSERT_TRUE(last);
  EXPECT_EQ(last->name, "__check_object_size");
  EXPECT_EQ(last->offset, 0xffu);

  auto next = index_.resolve(0xffffffff81000200);
  ASSERT_TRUE(next);
  EXPECT_EQ(next->name, "__check_object_size.cold");
  EXPECT_EQ(next->offset, 0u);
}

TEST_F(KallsymsIndexTest, TextOffsetIsFromStextForVmlinuxOnly) {
  // _stext is 0xffffffff81000000: KASLR moves both, the distance stays.
  EXPECT_EQ(index_.resolve(0xffffffff81000100 + 0x10)->text_offset, 0x110u);
  EXPECT_EQ(index_.resolve(0xffffffff81000000)->text_offset, 0u);
  EXPECT_EQ(index_.resolve(0xffffffffc0a01000 + 4)->text_offset, 0u);  // module
  EXPECT_EQ(parse("ffffffff81000100 T f\n").resolve(0xffffffff81000104)->text_offset, 0u)
      << "no _stext: no text offset";
}

TEST_F(KallsymsIndexTest, ResolvesModuleSymbols) {
  auto frame = index_.resolve(0xffffffffc0a01010);
  ASSERT_TRUE(frame);
  EXPECT_EQ(frame->name, "nft_do_chain");
  EXPECT_EQ(frame->module, "nf_tables");
  EXPECT_EQ(frame->offset, 0x10u);
  EXPECT_EQ(index_.find_exact("udp_tunnel_x")->module, "udp_tunnel");
}

TEST_F(KallsymsIndexTest, AliasesResolveToTheGlobalName) {
  auto frame = index_.resolve(0xffffffff81000050);
  ASSERT_TRUE(frame);
  EXPECT_EQ(frame->name, "_stext");
  EXPECT_EQ(frame->offset, 0x50u);
}

TEST_F(KallsymsIndexTest, UnknownAddressesResolveToNothing) {
  EXPECT_FALSE(index_.resolve(0));
  EXPECT_FALSE(index_.resolve(0xffffffff80ffffff));  // below the first symbol
  EXPECT_FALSE(index_.resolve(0xffffffff81000300));  // _etext: end of text
  EXPECT_FALSE(index_.resolve(0xffffffff82000000));  // data, after _etext
  EXPECT_FALSE(index_.resolve(0xffffffffffffffff));  // above everything
}

TEST_F(KallsymsIndexTest, SymbolBeforeAnotherModuleIsCappedAtOnePage) {
  EXPECT_EQ(index_.find_exact("nft_other")->size, 4096u);
  EXPECT_TRUE(index_.resolve(0xffffffffc0a01400 + 4095));
  EXPECT_FALSE(index_.resolve(0xffffffffc0a01400 + 4096));
}

TEST_F(KallsymsIndexTest, LastSymbolIsAssumedOnePage) {
  EXPECT_EQ(index_.find_exact("udp_tunnel_x")->size, 4096u);
  auto inside = index_.resolve(0xffffffffc0b00000 + 4095);
  ASSERT_TRUE(inside);
  EXPECT_EQ(inside->name, "udp_tunnel_x");
  EXPECT_FALSE(index_.resolve(0xffffffffc0b00000 + 4096));
}

TEST_F(KallsymsIndexTest, FindNormalizedReturnsEverySuffixedPart) {
  auto parts = index_.find_normalized("__check_object_size");
  ASSERT_EQ(parts.size(), 2u);
  EXPECT_EQ(parts[0].name, "__check_object_size");
  EXPECT_EQ(parts[1].name, "__check_object_size.cold");
  EXPECT_TRUE(index_.find_normalized("check_heap_object").empty());
}

TEST_F(KallsymsIndexTest, FindExactDoesNotNormalize) {
  EXPECT_TRUE(index_.find_exact("__check_object_size.cold"));
  EXPECT_FALSE(index_.find_exact("__check_object_size.part.0"));
}

TEST(KallsymsIndex, HiddenAddressesResolveNothingButKeepNames) {
  // What an unprivileged reader sees with kptr_restrict set.
  auto index = parse(
      "0000000000000000 T _stext\n"
      "0000000000000000 T __check_object_size\n"
      "0000000000000000 t nft_do_chain\t[nf_tables]\n");
  EXPECT_TRUE(index.addresses_hidden());
  EXPECT_EQ(index.size(), 3u);
  EXPECT_FALSE(index.resolve(0));
  EXPECT_FALSE(index.resolve(0x10));
  EXPECT_TRUE(index.find_exact("__check_object_size"));
}

TEST(KallsymsIndex, OneZeroAddressDoesNotMeanHidden) {
  auto index = parse(
      "0000000000000000 T zero_text\n"
      "ffffffff81000000 T _stext\n");
  EXPECT_FALSE(index.addresses_hidden());
  EXPECT_TRUE(index.resolve(0xffffffff81000000));
}

TEST(KallsymsIndex, EmptyInput) {
  auto index = parse("");
  EXPECT_EQ(index.size(), 0u);
  EXPECT_FALSE(index.addresses_hidden());
  EXPECT_FALSE(index.resolve(0xffffffff81000000));
}

TEST(KallsymsIndex, RealKernelExcerpt) {
  std::ifstream in(HUC_TEST_DATA_DIR "/kallsyms_6.18_excerpt.txt");
  ASSERT_TRUE(in) << "fixture missing";
  auto index = KallsymsIndex::parse(in);
  EXPECT_EQ(index.size(), 23u);

  auto check = index.resolve(0xffffffff816c9250 + 0x42);
  ASSERT_TRUE(check);
  EXPECT_EQ(check->name, "__check_object_size");
  EXPECT_EQ(check->offset, 0x42u);
  // The objtool padding in front of a function is a symbol of its own.
  EXPECT_EQ(index.resolve(0xffffffff816c9248)->name, "__pfx___check_object_size");

  auto cold = index.resolve(0xffffffff81216b98 + 0x10);
  ASSERT_TRUE(cold);
  EXPECT_EQ(cold->name, "__check_object_size.cold");
  EXPECT_EQ(index.find_exact("__check_object_size.cold")->size, 0xcbu);

  // percpu_stats_open is the last vmlinux text symbol of the excerpt: the rodata after it is not
  // text and the next text symbol is a module, so only one page is assumed.
  EXPECT_EQ(index.find_exact("percpu_stats_open")->size, 4096u);
  EXPECT_FALSE(index.resolve(0xffffffff82400000));

  auto trampoline = index.resolve(0xffffffffc0201008);
  ASSERT_TRUE(trampoline);
  EXPECT_EQ(trampoline->module, "__builtin__ftrace");
  EXPECT_EQ(index.find_normalized("__check_object_size").size(), 2u);
}

// Runs against the machine's own kallsyms when it can be read; proves the parser copes with the
// full, real file (150k lines, mixed types, module tails) rather than with hand-made input.
TEST(KallsymsIndex, RunningKernel) {
  std::ifstream in("/proc/kallsyms");
  if (!in) GTEST_SKIP() << "/proc/kallsyms not readable";
  auto index = KallsymsIndex::parse(in);
  if (index.size() == 0) GTEST_SKIP() << "/proc/kallsyms empty";
  auto schedule = index.find_exact("schedule");
  ASSERT_TRUE(schedule);
  if (index.addresses_hidden()) {
    EXPECT_FALSE(index.resolve(schedule->address));
    return;
  }
  auto frame = index.resolve(schedule->address + 1);
  ASSERT_TRUE(frame);
  EXPECT_EQ(frame->name, "schedule");
  EXPECT_EQ(frame->offset, 1u);
}

}  // namespace
}  // namespace hucprof
