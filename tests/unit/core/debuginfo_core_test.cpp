// The pure half of the debuginfo feature: build-id notes, where to look, what to accept, the copy
// function of a stack, and the address cache in front of the resolver.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <chrono>
#include <filesystem>
#include <iterator>
#include <sstream>
#include <string>

#include "core/base/lru_cache.h"
#include "core/symbols/build_id.h"
#include "core/symbols/copy_path.h"
#include "core/symbols/debuginfo_search.h"
#include "core/symbols/source_symbolizer.h"
#include "core/symbols/stack_interner.h"
#include "core/symbols/stack_symbolizer.h"

namespace hucprof {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::Not;

std::string word(uint32_t w) { return std::string(reinterpret_cast<const char*>(&w), 4); }
std::string note(uint32_t type, std::string name, std::string desc) {
  std::string out = word(static_cast<uint32_t>(name.size())) +
                    word(static_cast<uint32_t>(desc.size())) + word(type) + name;
  out += std::string((4 - name.size() % 4) % 4, '\0');
  out += desc + std::string((4 - desc.size() % 4) % 4, '\0');
  return out;
}

TEST(BuildId, FoundAmongTheKernelsOtherNotes) {
  // /sys/kernel/notes holds Xen and Linux notes around the build-id (as on the 6.18 host).
  const std::string notes = note(6, std::string("Xen\0", 4), "linux\0") +
                            note(3, std::string("GNU\0", 4), "\xa3\xe4\xcd\x60\x01") +
                            note(1, std::string("Linux\0", 6), "6.1");
  EXPECT_EQ(gnu_build_id(notes), "a3e4cd6001");
}

TEST(BuildId, NoteOfAnotherTypeOrOwnerIsNotABuildId) {
  EXPECT_EQ(gnu_build_id(note(3, std::string("Xen\0", 4), "\x01\x02")), std::nullopt);
  EXPECT_EQ(gnu_build_id(note(1, std::string("GNU\0", 4), "\x01\x02")), std::nullopt);
  EXPECT_EQ(gnu_build_id(""), std::nullopt);
}

TEST(BuildId, TruncatedOrLyingSizesAreRejectedNotReadPast) {
  const std::string good = note(3, std::string("GNU\0", 4), "\x01\x02\x03\x04");
  for (size_t cut = 0; cut < good.size(); ++cut) {
    EXPECT_EQ(gnu_build_id(good.substr(0, cut)), std::nullopt) << cut;
  }
  std::string huge = good;
  huge.replace(4, 4, word(0xffffffffu));  // descsz far past the end
  EXPECT_EQ(gnu_build_id(huge), std::nullopt);
}

TEST(BuildId, PathBelowDotBuildId) {
  EXPECT_EQ(build_id_path("6a2b4ac77585b8cf"), "6a/2b4ac77585b8cf");
  EXPECT_EQ(short_build_id("6a2b4ac77585b8cf102cba77"), "6a2b4ac77585");
}

TEST(DebuginfoSearch, TheDistributionsPlacesInOrder) {
  EXPECT_THAT(
      vmlinux_candidates("", PathKind::Missing, "6.1.0-57-amd64", "6a2b4a"),
      ElementsAre("/usr/lib/debug/boot/vmlinux-6.1.0-57-amd64",
                  "/usr/lib/debug/lib/modules/6.1.0-57-amd64/vmlinux",
                  "/usr/lib/debug/vmlinux-6.1.0-57-amd64", "/usr/lib/debug/.build-id/6a/2b4a.debug",
                  "/usr/lib/debug/boot/vmlinux-6.1.0-57-amd64.debug",
                  "/boot/vmlinux-6.1.0-57-amd64", "/lib/modules/6.1.0-57-amd64/build/vmlinux"));
}

TEST(DebuginfoSearch, TheDefaultSearchLooksInTheRootItIsGiven) {
  EXPECT_THAT(
      vmlinux_candidates("", PathKind::Missing, "r", "6a2b4a", "/fake/"),
      ElementsAre("/fake/usr/lib/debug/boot/vmlinux-r", "/fake/usr/lib/debug/lib/modules/r/vmlinux",
                  "/fake/usr/lib/debug/vmlinux-r", "/fake/usr/lib/debug/.build-id/6a/2b4a.debug",
                  "/fake/usr/lib/debug/boot/vmlinux-r.debug", "/fake/boot/vmlinux-r",
                  "/fake/lib/modules/r/build/vmlinux"));
  EXPECT_THAT(module_debug_dirs("", PathKind::Missing, "r", "/fake"),
              ElementsAre("/fake/usr/lib/debug/lib/modules/r"));
  EXPECT_THAT(build_id_dirs("", PathKind::Missing, "/fake"),
              ElementsAre("/fake/usr/lib/debug/.build-id"));
  // --debuginfo.path names its place itself.
  EXPECT_THAT(vmlinux_candidates("/x/vmlinux", PathKind::File, "r", "", "/fake"),
              ElementsAre("/x/vmlinux"));
  EXPECT_THAT(vmlinux_candidates("/pkg", PathKind::Directory, "r", "", "/fake"),
              ::testing::Each(::testing::StartsWith("/pkg/")));
}

TEST(DebuginfoSearch, AFileIsTheOnlyCandidateADirectoryIsSearchedLikeUsrLibDebug) {
  EXPECT_THAT(vmlinux_candidates("/x/vmlinux", PathKind::File, "r", "ab12"),
              ElementsAre("/x/vmlinux"));
  EXPECT_THAT(vmlinux_candidates("/gone", PathKind::Missing, "r", "ab12"), ElementsAre("/gone"));
  const auto in_dir = vmlinux_candidates("/pkg/", PathKind::Directory, "r", "ab12");
  EXPECT_THAT(in_dir, ::testing::Contains("/pkg/boot/vmlinux-r"));
  EXPECT_THAT(in_dir, ::testing::Contains("/pkg/usr/lib/debug/boot/vmlinux-r"));  // a package
  EXPECT_THAT(in_dir, ::testing::Contains("/pkg/usr/lib/debug/lib/modules/r/vmlinux"));
  EXPECT_THAT(in_dir, ::testing::Contains("/pkg/vmlinux"));
  EXPECT_THAT(in_dir, ::testing::Contains("/pkg/vmlinux-r"));
  EXPECT_THAT(in_dir, ::testing::Not(::testing::Contains("/boot/vmlinux-r")));
  EXPECT_THAT(module_debug_dirs("", PathKind::Missing, "r"),
              ElementsAre("/usr/lib/debug/lib/modules/r"));
  EXPECT_THAT(build_id_dirs("", PathKind::Missing), ElementsAre("/usr/lib/debug/.build-id"));
}

TEST(DebuginfoSearch, ModuleFileNames) {
  EXPECT_EQ(module_of_file("af_packet.ko"), "af_packet");
  EXPECT_EQ(module_of_file("algif-hash.ko.debug"), "algif_hash");  // Fedora, '-' in the name
  EXPECT_EQ(module_of_file("nf_tables.ko.xz"), "nf_tables");
  EXPECT_EQ(module_of_file("vmlinux"), "");
  EXPECT_EQ(module_of_file(".ko"), "");
}

TEST(DebuginfoSearch, AFileIsAcceptedOnlyWithTheRunningBuildId) {
  EXPECT_EQ(judge_build_id("ab", "ab"), CandidateCheck::Accepted);
  EXPECT_EQ(judge_build_id("ab", "cd"), CandidateCheck::Mismatch);
  EXPECT_EQ(judge_build_id("", "cd"), CandidateCheck::NoBuildId);
  CandidateCheck c{"/v", CandidateCheck::Mismatch, "0123456789abcdef", ""};
  EXPECT_EQ(describe(c, "6a2b4ac77585b8cf"),
            "/v: refused: its build-id 0123456789ab is not the running kernel's 6a2b4ac77585 "
            "(another build: its lines would be wrong)");
  EXPECT_THAT(describe(c, ""), HasSubstr("build-id is unknown"));
}

TEST(DebuginfoSearch, TheInstallCommandOfEachDistribution) {
  EXPECT_EQ(install_command("PRETTY_NAME=\"Debian GNU/Linux 12\"\nID=debian\n", "6.1.0-57-amd64"),
            "apt-get install linux-image-6.1.0-57-amd64-dbg");
  EXPECT_THAT(install_command("ID=ubuntu\nID_LIKE=debian\n", "6.8.0-45-generic"),
              HasSubstr("apt-get install linux-image-6.8.0-45-generic-dbgsym"));
  EXPECT_EQ(install_command("ID=fedora\n", "6.11.4-301.fc41.x86_64"),
            "dnf debuginfo-install kernel-6.11.4-301.fc41.x86_64");
  EXPECT_EQ(install_command("ID=\"rocky\"\nID_LIKE=\"rhel centos fedora\"\n",
                            "5.14.0-427.13.1.el9_4.x86_64"),
            "dnf debuginfo-install kernel-5.14.0-427.13.1.el9_4.x86_64");
  EXPECT_EQ(install_command("ID=debian\n", "6.12.117+deb12-amd64"),
            "apt-get install linux-image-6.12.117+deb12-amd64-dbg");
  EXPECT_EQ(install_command("ID=debian\n", "7.3.4+deb13-cloud-arm64"),
            "apt-get install linux-image-7.3.4+deb13-cloud-arm64-dbg");
  EXPECT_EQ(install_command("ID=debian\n", "5.10.0-35-rt-amd64"),
            "apt-get install linux-image-5.10.0-35-rt-amd64-dbg");
  EXPECT_EQ(install_command("ID=debian\n", "6.1.0-57-armmp-lpae"),
            "apt-get install linux-image-6.1.0-57-armmp-lpae-dbg");
  EXPECT_EQ(install_command("ID=debian\n", "6.12.43+deb13u1-4kc-malta"),
            "apt-get install linux-image-6.12.43+deb13u1-4kc-malta-dbg");
  EXPECT_THAT(install_command("", "6.1"), HasSubstr("--debuginfo.path"));
}

// A kernel the distribution never built (the development machines' 6.18 on Debian 12): there is
// no package to install, only the build's own vmlinux.
TEST(DebuginfoSearch, NoPackageAdviceForAKernelNoDistributionBuilt) {
  for (const auto& [os, release] : std::vector<std::pair<std::string, std::string>>{
           {"ID=debian\n", "6.18.44-fc-v1272"},
           {"ID=debian\n", "6.1.0"},
           {"ID=ubuntu\nID_LIKE=debian\n", "6.9.0-rc3+"},
           {"ID=fedora\n", "6.11.4"},
           {"ID=debian\n", "6.1.0-57-xen-amd64"},
           {"ID=debian\n", "6.1.0--amd64"},
           {"ID=debian\n", "6.12.117+deb12u-amd64"},
           {"ID=debian\n", "amd64"},
           {"ID=ubuntu\n", "6.8.0-45-Generic"},
           {"ID=fedora\n", "6.11.4-301.fc.x86_64"},
           {"ID=fedora\n", "6.11.4-301.fc41."},
           {"ID=fedora\n", "6.11.4-30a.fc41.x86_64"}}) {
    const std::string advice = install_command(os, release);
    EXPECT_THAT(advice, Not(HasSubstr("install"))) << release;
    EXPECT_THAT(advice, HasSubstr("--debuginfo.path")) << release;
    EXPECT_THAT(advice, HasSubstr(release)) << release;
  }
}

TEST(LruCache, ForgetsTheLeastRecentlyUsed) {
  LruCache<int, std::string> cache(2);
  cache.put(1, "a");
  cache.put(2, "b");
  ASSERT_NE(cache.find(1), nullptr);  // 1 is now the most recent
  cache.put(3, "c");
  EXPECT_EQ(cache.find(2), nullptr);
  EXPECT_EQ(*cache.find(1), "a");
  EXPECT_EQ(*cache.find(3), "c");
  EXPECT_EQ(cache.size(), 2u);
  cache.put(3, "d");
  EXPECT_EQ(*cache.find(3), "d");
  EXPECT_EQ(cache.size(), 2u);
}

SourceLinesPtr lines(SourceLines l) { return std::make_shared<const SourceLines>(std::move(l)); }

// The udp_recvmsg chain of Debian 6.1 (addr2line -i on its vmlinux).
const SourceLines kUdpChain = {{"check_object_size", "include/linux/thread_info.h", 199},
                               {"check_copy_size", "include/linux/thread_info.h", 235},
                               {"copy_to_iter", "include/linux/uio.h", 178},
                               {"copy_linear_skb", "include/net/udp.h", 377},
                               {"udp_recvmsg", "net/ipv4/udp.c", 1950}};

struct CopyPathTest : ::testing::Test {
  FramePtr frame(std::string name, SourceLinesPtr source = nullptr) {
    return interner.frame({std::move(name), "", 0, 0, std::move(source)});
  }
  StackInterner interner;
  FoldingRules rules = FoldingRules::defaults();
};

TEST_F(CopyPathTest, TheSeedChainNamesCopyToIter) {
  const ProfileStack stack{frame("__virt_addr_valid"), frame("__check_object_size"),
                           frame("udp_recvmsg", lines(kUdpChain)), frame("sock_recvmsg")};
  EXPECT_EQ(copy_function(stack, rules), "copy_to_iter");
  const CopyPath path = copy_path(stack, rules);
  EXPECT_EQ(path.copy, "copy_to_iter");
  ASSERT_EQ(path.steps.size(), 5u);
  EXPECT_TRUE(path.steps[0].inlined);
  EXPECT_FALSE(path.steps[4].inlined);
  EXPECT_EQ(path.steps[4].line, kUdpChain[4]);
  EXPECT_EQ(copy_chain_text(path), "udp_recvmsg → copy_linear_skb → copy_to_iter");
}

TEST_F(CopyPathTest, AHelperCalledCheckTakesTheCopyFromTheHelperAndThePathUpToTheCallSite) {
  const ProfileStack stack{
      frame("find_vmap_area"),
      frame("__check_object_size"),
      frame("simple_copy_to_iter", lines({{"check_object_size", "include/linux/thread_info.h", 199},
                                          {"check_copy_size", "include/linux/thread_info.h", 235},
                                          {"copy_to_iter", "include/linux/uio.h", 178},
                                          {"simple_copy_to_iter", "net/core/datagram.c", 524}})),
      frame("__skb_datagram_iter", lines({{"__skb_datagram_iter", "net/core/datagram.c", 409}})),
      frame("skb_copy_datagram_iter"),  // no lines for this one: named alone
      frame("netlink_recvmsg", lines({{"skb_copy_datagram_msg", "include/linux/skbuff.h", 3976},
                                      {"netlink_recvmsg", "net/netlink/af_netlink.c", 1978}})),
      frame("sock_recvmsg")};
  const CopyPath path = copy_path(stack, rules);
  EXPECT_EQ(path.copy, "copy_to_iter");
  ASSERT_EQ(path.steps.size(), 8u);
  EXPECT_EQ(path.steps[6].line.function, "skb_copy_datagram_msg");
  EXPECT_TRUE(path.steps[6].inlined);
  EXPECT_EQ(path.steps[5].line.file, "");  // skb_copy_datagram_iter
  EXPECT_EQ(path.steps.back().line.function, "netlink_recvmsg");
  EXPECT_EQ(copy_chain_text(path),
            "netlink_recvmsg → skb_copy_datagram_msg → skb_copy_datagram_iter → "
            "__skb_datagram_iter → simple_copy_to_iter → copy_to_iter");
}

TEST_F(CopyPathTest, NoCopyWithoutLinesOrWithoutACheck) {
  EXPECT_EQ(copy_function({frame("__check_object_size"), frame("udp_recvmsg")}, rules), "");
  EXPECT_EQ(copy_function({frame("udp_recvmsg", lines(kUdpChain))}, rules), "");
  EXPECT_EQ(copy_function({frame("__check_object_size")}, rules), "");
  // A function calling the check itself, nothing inlined: it is the copy.
  EXPECT_EQ(copy_function({frame("__check_object_size"),
                           frame("put_cmsg", lines({{"put_cmsg", "net/core/scm.c", 250}}))},
                          rules),
            "put_cmsg");
}

// Kallsyms with _stext, a function, a module function.
constexpr const char* kKallsyms =
    "ffffffff81000000 T _stext\n"
    "ffffffff81000100 T __check_object_size\n"
    "ffffffff81000400 T udp_recvmsg\n"
    "ffffffff81000800 T _etext\n"
    "ffffffffc0000000 t hash_recvmsg\t[algif_hash]\n"
    "ffffffffc0000400 t hash_sendmsg\t[algif_hash]\n";

struct FakeResolver : SourceResolver {
  SourceLinesPtr lines(const SourceAddress& at) override {
    asked.push_back(at);
    if (at.module.empty() && at.text_offset == 0x5a3)
      return std::make_shared<SourceLines>(kUdpChain);
    if (at.module == "algif_hash") {
      return std::make_shared<SourceLines>(
          SourceLines{{"hash_recvmsg", "crypto/algif_hash.c", 250}});
    }
    return nullptr;
  }
  bool ready() const override { return is_ready; }
  bool take_news() override { return std::exchange(news, false); }
  void set_news_listener(std::function<void()> l) override { listener = std::move(l); }
  void end_batch() override { ++batches; }
  void start_threads() override { ++thread_starts; }
  std::vector<SourceAddress> asked;
  std::function<void()> listener;
  bool is_ready = true, news = false;
  int batches = 0;
  int thread_starts = 0;
};

size_t threads_running() {
  const std::filesystem::directory_iterator tasks("/proc/self/task");
  return static_cast<size_t>(std::distance(begin(tasks), end(tasks)));
}

KallsymsSymbolizer kallsyms_names() {
  std::istringstream in(kKallsyms);
  return KallsymsSymbolizer(KallsymsIndex::parse(in), std::nullopt, nullptr, nullptr);
}

TEST(SourceSymbolizer, AReturnAddressIsLookedUpOneByteBackOnceForAllDrains) {
  KallsymsSymbolizer names = kallsyms_names();
  FakeResolver resolver;
  SourceSymbolizer symbols(names, resolver, SourceSymbolizer::Lookups::InTheDrain);
  const auto frame = symbols.return_frame(0xffffffff810005a4);
  ASSERT_TRUE(frame && frame->source);
  EXPECT_EQ(frame->name, "udp_recvmsg");
  EXPECT_EQ(frame->offset, 0x1a4u);  // the name and offsets stay the return address's
  EXPECT_EQ(*frame->source, kUdpChain);
  EXPECT_THAT(resolver.asked, ElementsAre(SourceAddress{"", "", 0x1a3, 0x5a3}));
  symbols.return_frame(0xffffffff810005a4);
  EXPECT_EQ(resolver.asked.size(), 1u);  // cached
  // A sampled instruction is looked up where it is.
  symbols.frame(0xffffffff810005a4);
  EXPECT_EQ(resolver.asked.back(), (SourceAddress{"", "", 0x1a4, 0x5a4}));
  // Modules by symbol and offset: their load address changes with every load.
  const auto in_module = symbols.return_frame(0xffffffffc0000010);
  ASSERT_TRUE(in_module && in_module->source);
  EXPECT_EQ(resolver.asked.back(), (SourceAddress{"algif_hash", "hash_recvmsg", 0xf, 0}));
  // A return address at a symbol's start belongs to the call before it: no lines.
  EXPECT_EQ(symbols.return_frame(0xffffffffc0000400)->source, nullptr);
  EXPECT_TRUE(symbols.has_sources());
}

TEST(SourceSymbolizer, NewDebuginfoDropsTheCachedAnswers) {
  KallsymsSymbolizer names = kallsyms_names();
  FakeResolver resolver;
  resolver.is_ready = false;
  SourceSymbolizer symbols(names, resolver, SourceSymbolizer::Lookups::InTheDrain);
  EXPECT_FALSE(symbols.has_sources());
  EXPECT_FALSE(symbols.begin_interval());
  symbols.return_frame(0xffffffff81000450);
  symbols.end_interval();
  EXPECT_EQ(resolver.batches, 1);
  const uint64_t before = symbols.generation();
  resolver.is_ready = resolver.news = true;
  EXPECT_TRUE(symbols.begin_interval());
  EXPECT_EQ(symbols.cached_addresses(), 0u);
  // What was folded with the old answers is stale: the interval builder sees the generation move.
  EXPECT_NE(symbols.generation(), before);
  symbols.return_frame(0xffffffff81000450);
  EXPECT_EQ(resolver.asked.size(), 2u);
}

TEST(SourceSymbolizer, TheCacheIsBounded) {
  KallsymsSymbolizer names = kallsyms_names();
  FakeResolver resolver;
  SourceSymbolizer symbols(names, resolver, SourceSymbolizer::Lookups::InTheDrain, 4);
  for (uint64_t a = 0xffffffff81000401; a < 0xffffffff81000421; ++a) symbols.return_frame(a);
  EXPECT_EQ(symbols.cached_addresses(), 4u);
  EXPECT_EQ(symbols.lookups(), 32u);
}

// In the background (the daemon): a new address goes out without lines and is counted as
// unanswered; the worker's answer comes in at the next drain.
TEST(SourceSymbolizer, InTheBackgroundANewAddressIsAnsweredByTheNextDrain) {
  KallsymsSymbolizer names = kallsyms_names();
  FakeResolver resolver;
  SourceSymbolizer symbols(names, resolver, SourceSymbolizer::Lookups::InTheBackground);
  EXPECT_FALSE(symbols.begin_interval());
  const auto first = symbols.return_frame(0xffffffff810005a4);
  ASSERT_TRUE(first);
  EXPECT_EQ(first->name, "udp_recvmsg");  // named at once: kallsyms
  EXPECT_EQ(first->source, nullptr);
  EXPECT_EQ(symbols.unanswered(), 1u);
  symbols.return_frame(0xffffffff810005a4);  // asked again before the answer: not looked up twice
  EXPECT_EQ(symbols.unanswered(), 2u);
  symbols.end_interval();
  ASSERT_TRUE(symbols.wait_answered(std::chrono::seconds(10)));
  EXPECT_EQ(resolver.asked.size(), 1u);
  EXPECT_EQ(resolver.batches, 1);  // the worker gave the pages back after the drain's lookups
  EXPECT_FALSE(symbols.begin_interval());
  const auto answered = symbols.return_frame(0xffffffff810005a4);
  ASSERT_TRUE(answered && answered->source);
  EXPECT_EQ(*answered->source, kUdpChain);
  EXPECT_EQ(symbols.unanswered(), 2u);
  EXPECT_EQ(symbols.lookups(), 1u);
}

// hucprof drops its capabilities after start-up only while it is single-threaded: no thread
// (lookups or the resolver's downloads) may start before the first drain asks for something.
TEST(SourceSymbolizer, InTheBackgroundNoThreadStartsBeforeTheFirstRequest) {
  KallsymsSymbolizer names = kallsyms_names();
  FakeResolver resolver;
  const size_t before = threads_running();
  SourceSymbolizer symbols(names, resolver, SourceSymbolizer::Lookups::InTheBackground);
  EXPECT_EQ(threads_running(), before);
  EXPECT_EQ(resolver.thread_starts, 0);
  EXPECT_FALSE(symbols.begin_interval());  // nothing asked yet: still no thread
  EXPECT_EQ(threads_running(), before);
  symbols.return_frame(0xffffffff810005a4);
  ASSERT_TRUE(symbols.wait_answered(std::chrono::seconds(10)));
  EXPECT_EQ(threads_running(), before + 1);
  EXPECT_EQ(resolver.thread_starts, 1);  // told by the worker, once it runs
}

TEST(SourceSymbolizer, InTheBackgroundAnswersFromBeforeAModuleReloadAreDropped) {
  KallsymsSymbolizer names = kallsyms_names();
  FakeResolver resolver;
  SourceSymbolizer symbols(names, resolver, SourceSymbolizer::Lookups::InTheBackground);
  symbols.return_frame(0xffffffffc0000010);
  symbols.modules_changed();  // algif_hash may be another build now: that answer is stale
  ASSERT_TRUE(symbols.wait_answered(std::chrono::seconds(10)));
  symbols.begin_interval();
  EXPECT_EQ(symbols.return_frame(0xffffffffc0000010)->source, nullptr);
  EXPECT_EQ(symbols.unanswered(), 2u);
  ASSERT_TRUE(symbols.wait_answered(std::chrono::seconds(10)));
  EXPECT_EQ(resolver.asked.size(), 2u);  // asked again, after the reload
  symbols.begin_interval();
  EXPECT_NE(symbols.return_frame(0xffffffffc0000010)->source, nullptr);
}

TEST(SourceSymbolizer, InTheBackgroundNewsReachesTheDrainAndDropsTheCache) {
  KallsymsSymbolizer names = kallsyms_names();
  FakeResolver resolver;
  resolver.is_ready = false;  // a debuginfod download on its way
  SourceSymbolizer symbols(names, resolver, SourceSymbolizer::Lookups::InTheBackground);
  EXPECT_FALSE(symbols.has_sources());
  symbols.return_frame(0xffffffff810005a4);
  symbols.end_interval();
  ASSERT_TRUE(symbols.wait_answered(std::chrono::seconds(10)));
  EXPECT_FALSE(symbols.begin_interval());
  EXPECT_EQ(symbols.cached_addresses(), 1u);
  symbols.end_interval();  // a drain that asked nothing: the worker is not even woken
  ASSERT_TRUE(symbols.wait_answered(std::chrono::seconds(10)));
  EXPECT_EQ(resolver.batches, 1);
  resolver.is_ready = resolver.news = true;  // it arrived
  ASSERT_TRUE(resolver.listener);
  resolver.listener();
  ASSERT_TRUE(symbols.wait_answered(std::chrono::seconds(10)));
  const uint64_t before = symbols.generation();
  EXPECT_TRUE(symbols.begin_interval());
  EXPECT_TRUE(symbols.has_sources());
  EXPECT_EQ(symbols.cached_addresses(), 0u);
  EXPECT_NE(symbols.generation(), before);
  // Answers without news move nothing.
  EXPECT_FALSE(symbols.begin_interval());
  EXPECT_EQ(symbols.generation(), before + 1);
}

}  // namespace
}  // namespace hucprof
