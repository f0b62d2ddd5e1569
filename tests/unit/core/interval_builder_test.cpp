// raw kernel counters → folded deltas: the step between the kernel edge and the aggregator.
#include "core/drain/interval_builder.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstdio>
#include <cstring>
#include <map>
#include <string>
#include <tuple>

#include "table_fakes.h"

// The target architecture's numbers: the builder names syscalls by the ABI it is built for
// (SyscallName.KnownNumbers pins them per architecture).
#include <sys/syscall.h>

namespace hucprof {
namespace {

constexpr uint64_t kUdpRecvmsg = 0xffffffff81a00010;
constexpr uint64_t kCheck = 0xffffffff81200010;
constexpr uint64_t kFindVmap = 0xffffffff81300010;
constexpr uint64_t kSimpleCopy = 0xffffffff81400010;
constexpr uint64_t kSkbDatagramIter = 0xffffffff81400110;
constexpr uint64_t kSkbCopyDatagram = 0xffffffff81400210;
constexpr uint64_t kNetlinkRecvmsg = 0xffffffff81500010;
constexpr uint64_t kSysRecvmsg = 0xffffffff81600010;
constexpr uint64_t kUnknown = 0xffffffffc0000010;

TableSymbolizer symbols() {
  return TableSymbolizer({{kUdpRecvmsg, "udp_recvmsg"},
                          {kCheck, "__check_object_size"},
                          {kFindVmap, "find_vmap_area"},
                          {kSimpleCopy, "simple_copy_to_iter"},
                          {kSkbDatagramIter, "__skb_datagram_iter"},
                          {kSkbCopyDatagram, "skb_copy_datagram_iter"},
                          {kNetlinkRecvmsg, "netlink_recvmsg"},
                          {kSysRecvmsg, "__sys_recvmsg"}});
}

huc_site_key direct_key(uint64_t caller, int32_t syscall_nr, uint8_t direction) {
  huc_site_key key{};
  key.caller = caller;
  key.syscall_nr = syscall_nr;
  key.direction = direction;
  return key;
}

huc_sample_key sample_key(uint64_t stack_id, int32_t syscall_nr) {
  huc_sample_key key{};
  key.stack_id = stack_id;
  key.syscall_nr = syscall_nr;
  std::memcpy(key.comm, "netperf", 8);
  return key;
}

IntervalBuilder builder() { return IntervalBuilder(CallsiteFolder(FoldingRules::defaults())); }

std::vector<std::string> names(const ProfileSample& sample) {
  std::vector<std::string> out;
  for (const auto& f : *sample.stack) out.push_back(f->function);
  return out;
}

using ::testing::ElementsAre;

constexpr uint64_t kFullStackId = 0x5bd1e9955bd1e995;  // a content hash, never 0

TEST(IntervalBuilder, DirectCallerIsTheCallsiteAndSyscallComesFromItsNumber) {
  auto b = builder();
  auto syms = symbols();
  RawDrain drain;
  drain.probes = true;
  drain.sites.push_back({direct_key(kUdpRecvmsg, SYS_recvfrom, HUC_DIR_TO_USER), 10, 640});
  auto deltas = b.build(drain, syms);
  ASSERT_EQ(deltas.checks.size(), 1u);
  EXPECT_EQ(deltas.checks[0].callsite, "udp_recvmsg");
  EXPECT_EQ(deltas.checks[0].syscall, "recvfrom");
  EXPECT_EQ(deltas.checks[0].direction, "to_user");
  EXPECT_EQ(deltas.checks[0].calls, 10u);
  EXPECT_EQ(deltas.checks[0].bytes, 640u);
}

// Probe mode's classified calls by where their sub-checks ended: the kind of object each copied,
// and only what the classifier saw (an end at __virt_addr_valid without a slab folio is "other",
// not "page"); no identity yet.
TEST(IntervalBuilder, ClassifiedEndsBecomeObjectKinds) {
  auto b = builder();
  auto syms = symbols();
  RawDrain drain;
  drain.probes = true;
  RawSiteCount site{direct_key(kUdpRecvmsg, SYS_recvfrom, HUC_DIR_TO_USER), 10, 640};
  site.ended_at[HUC_END_STACK] = 1;
  site.ended_at[HUC_END_PAGE] = 2;
  site.ended_at[HUC_END_SLAB] = 7;
  drain.sites.push_back(site);
  drain.sites.push_back({direct_key(kNetlinkRecvmsg, SYS_recvmsg, HUC_DIR_TO_USER), 3, 30});
  const auto deltas = b.build(drain, syms);
  std::map<std::string, uint64_t> kinds;
  for (const ObjectDelta& o : deltas.objects) {
    EXPECT_EQ(o.callsite, "udp_recvmsg") << "a site without classified calls has no kinds";
    EXPECT_EQ(o.object, "[unknown]");
    kinds[o.object_kind] += o.count;
  }
  EXPECT_EQ(kinds, (std::map<std::string, uint64_t>{{"other", 2}, {"slab", 7}, {"stack", 1}}));
}

// Slab checks by cache and region: two CPUs' counts of one key add up, a cache whose name was
// read is named, one whose name is missing and the checks the full objects map could not count
// (the site's slab end minus what was identified) are "[unknown]".
TEST(IntervalBuilder, SlabChecksAreSplitByCacheAndWhatIsLeftIsUnknown) {
  auto b = builder();
  auto syms = symbols();
  RawDrain drain;
  drain.probes = true;
  const huc_site_key key = direct_key(kUdpRecvmsg, SYS_recvfrom, HUC_DIR_TO_USER);
  RawSiteCount site{key, 20, 640};
  site.ended_at[HUC_END_SLAB] = 20;
  site.ended_at[HUC_END_STACK] = 0;
  drain.sites.push_back(site);
  auto object = [&](uint64_t cache, uint32_t region, uint64_t count) {
    RawObjectCount c;
    c.key.site = key;
    c.key.cache = cache;
    c.key.region = region;
    c.count = count;
    drain.objects.push_back(c);
  };
  object(0xffff888001000000, HUC_REGION_INSIDE, 9);
  object(0xffff888001000000, HUC_REGION_INSIDE, 3);  // the same key from another drain read
  object(0xffff888001000000, HUC_REGION_OUTSIDE, 1);
  object(0xffff888002000000, HUC_REGION_INSIDE, 2);  // no name read
  drain.slab_caches[0xffff888001000000] = "kmalloc-512";
  const auto deltas = b.build(drain, syms);
  std::map<std::tuple<std::string, std::string, std::string>, uint64_t> got;
  for (const ObjectDelta& o : deltas.objects) {
    EXPECT_EQ(o.callsite, "udp_recvmsg");
    EXPECT_EQ(o.object_kind, "slab");
    got[{o.object, o.region, o.callsite}] += o.count;
  }
  EXPECT_EQ(got, (std::map<std::tuple<std::string, std::string, std::string>, uint64_t>{
                     {{"kmalloc-512", "inside", "udp_recvmsg"}, 12},
                     {{"kmalloc-512", "outside", "udp_recvmsg"}, 1},
                     {{"[unknown]", "inside", "udp_recvmsg"}, 2},
                     {{"[unknown]", "unknown", "udp_recvmsg"}, 5}}));
}

TEST(IntervalBuilder, EachDrainReportsTheCountsOfItsGeneration) {
  auto b = builder();
  auto syms = symbols();
  RawDrain first;
  first.sites.push_back({direct_key(kUdpRecvmsg, SYS_recvfrom, HUC_DIR_TO_USER), 10, 640});
  b.build(first, syms);
  // The kernel deleted the drained keys: the next drain holds only what came since.
  RawDrain second;
  second.sites.push_back({direct_key(kUdpRecvmsg, SYS_recvfrom, HUC_DIR_TO_USER), 3, 192});
  auto deltas = b.build(second, syms);
  ASSERT_EQ(deltas.checks.size(), 1u);
  EXPECT_EQ(deltas.checks[0].calls, 3u);
  EXPECT_EQ(deltas.checks[0].bytes, 192u);
  EXPECT_TRUE(b.build(RawDrain{}, syms).checks.empty());  // nothing happened: nothing to report
}

TEST(IntervalBuilder, OneCallSiteInTwoGenerationsCountsBoth) {
  auto b = builder();
  auto syms = symbols();
  RawDrain drain;
  auto older = direct_key(kUdpRecvmsg, SYS_recvfrom, HUC_DIR_TO_USER);
  auto newer = older;
  newer.generation = 1;
  drain.sites.push_back({older, 2, 128});
  drain.sites.push_back({newer, 5, 320});
  uint64_t calls = 0, bytes = 0;
  for (const auto& c : b.build(drain, syms).checks) {
    EXPECT_EQ(c.callsite, "udp_recvmsg");
    calls += c.calls;
    bytes += c.bytes;
  }
  EXPECT_EQ(calls, 7u);
  EXPECT_EQ(bytes, 448u);
}

TEST(IntervalBuilder, HelperCallerFoldsThroughItsShortStack) {
  auto b = builder();
  auto syms = symbols();
  RawDrain drain;
  huc_site_key key{};
  key.short_stack_id = 7;
  key.syscall_nr = SYS_recvmsg;
  key.direction = HUC_DIR_TO_USER;
  drain.sites.push_back({key, 4, 4 * 65536});
  drain.short_stacks[7] = {kCheck,           kSimpleCopy,     kSkbDatagramIter,
                           kSkbCopyDatagram, kNetlinkRecvmsg, kSysRecvmsg};
  huc_subcheck_key sub{};
  sub.site = key;
  sub.kind = HUC_CHECK_VMALLOC;
  drain.subchecks.push_back({sub, 4});
  auto deltas = b.build(drain, syms);
  ASSERT_EQ(deltas.checks.size(), 1u);
  EXPECT_EQ(deltas.checks[0].callsite, "netlink_recvmsg");
  EXPECT_EQ(deltas.checks[0].syscall, "recvmsg");
  ASSERT_EQ(deltas.subchecks.size(), 1u);
  EXPECT_EQ(deltas.subchecks[0].callsite, "netlink_recvmsg");
  EXPECT_EQ(deltas.subchecks[0].step, "vmap_area");
  EXPECT_EQ(deltas.subchecks[0].count, 4u);
}

TEST(IntervalBuilder, MissingShortStackIsCountedNotGuessed) {
  auto b = builder();
  auto syms = symbols();
  RawDrain drain;
  huc_site_key key{};
  key.short_stack_id = 9;
  key.syscall_nr = -1;
  drain.sites.push_back({key, 5, 50});
  huc_subcheck_key sub{};
  sub.site = key;
  sub.kind = HUC_CHECK_SLAB;
  drain.subchecks.push_back({sub, 3});
  huc_latency_key lat{};
  lat.site = key;
  lat.slot = 9;
  drain.latency.push_back({lat, 2});
  auto deltas = b.build(drain, syms);
  ASSERT_EQ(deltas.checks.size(), 1u);
  EXPECT_EQ(deltas.checks[0].callsite, "[unknown]");
  EXPECT_EQ(deltas.checks[0].syscall, "none");
  ASSERT_EQ(deltas.subchecks.size(), 1u);
  EXPECT_EQ(deltas.subchecks[0].callsite, "[unknown]");
  // Every event that lost its call site is a drop: 5 checks, 3 sub-checks, 2 timings.
  EXPECT_EQ(deltas.drops.at(kDropStackMissing), 5u + 3u + 2u);
}

TEST(IntervalBuilder, UnresolvableCallerIsCountedAsDrop) {
  auto b = builder();
  auto syms = symbols();
  RawDrain drain;
  drain.sites.push_back({direct_key(kUnknown, 0, HUC_DIR_FROM_USER), 2, 20});
  auto deltas = b.build(drain, syms);
  ASSERT_EQ(deltas.checks.size(), 1u);
  EXPECT_EQ(deltas.checks[0].callsite, "[unknown]");
  EXPECT_EQ(deltas.checks[0].direction, "from_user");
  EXPECT_EQ(deltas.drops.at(kDropSymbolUnresolved), 2u);
}

TEST(IntervalBuilder, SampleStackGivesCallsiteCheckAndSyscall) {
  auto b = builder();
  auto syms = symbols();
  RawDrain drain;
  drain.sampling = true;
  drain.samples.push_back({sample_key(3, SYS_recvmsg), 6});
  drain.sample_stacks[3] = {kFindVmap,        kCheck,          kSimpleCopy, kSkbDatagramIter,
                            kSkbCopyDatagram, kNetlinkRecvmsg, kSysRecvmsg};
  drain.contexts = {100, 50, 25};
  auto deltas = b.build(drain, syms);
  ASSERT_EQ(deltas.samples.size(), 1u);
  EXPECT_EQ(deltas.samples[0].callsite, "netlink_recvmsg");
  EXPECT_EQ(deltas.samples[0].step, "vmap_area");
  EXPECT_EQ(deltas.samples[0].syscall, "recvmsg");
  EXPECT_EQ(deltas.samples[0].samples, 6u);
  EXPECT_EQ(deltas.sampled_by_context.at("kernel"), 100u);
  EXPECT_EQ(deltas.sampled_by_context.at("user"), 50u);
  EXPECT_EQ(deltas.sampled_by_context.at("idle"), 25u);
}

TEST(IntervalBuilder, SamplesCarryTheirTasksCommAndPid) {
  auto b = builder();
  auto syms = symbols();
  RawDrain drain;
  drain.sampling = true;
  huc_sample_key iperf = sample_key(3, SYS_recvmsg);
  std::memcpy(iperf.comm, "iperf3", 7);
  iperf.tgid = 4242;
  huc_sample_key daemon = sample_key(3, SYS_recvmsg);  // the same stack, another task
  std::memcpy(daemon.comm, "systemd-journal", 16);     // 15 characters and the NUL
  drain.samples.push_back({iperf, 6});
  drain.samples.push_back({daemon, 2});
  drain.sample_stacks[3] = {kFindVmap,        kCheck,          kSimpleCopy, kSkbDatagramIter,
                            kSkbCopyDatagram, kNetlinkRecvmsg, kSysRecvmsg};
  auto deltas = b.build(drain, syms);
  ASSERT_EQ(deltas.stacks.size(), 2u);
  EXPECT_EQ(deltas.stacks[0].stack, deltas.stacks[1].stack);
  EXPECT_EQ(deltas.stacks[0].labels->comm, "iperf3");
  EXPECT_EQ(deltas.stacks[0].labels->pid, 4242);
  EXPECT_EQ(deltas.stacks[0].values[kSamples], 6u);
  EXPECT_EQ(deltas.stacks[1].labels->comm, "systemd-journal");
  EXPECT_EQ(deltas.stacks[1].labels->pid, 0) << "no tgid in the key: no pid label";
  EXPECT_EQ(deltas.stacks[1].labels->callsite, "netlink_recvmsg") << "the other labels stay";
  EXPECT_EQ(deltas.stacks[1].values[kSamples], 2u);
}

TEST(IntervalBuilder, CommsPastTheBoundFoldWithTheirSamples) {
  auto b = builder();
  auto syms = symbols();
  RawDrain drain;
  drain.sampling = true;
  drain.sample_stacks[3] = {kFindVmap, kCheck, kSimpleCopy, kNetlinkRecvmsg, kSysRecvmsg};
  const size_t comms = TaskLabels::kNamedComms + 10;
  for (size_t i = 0; i < comms; ++i) {
    huc_sample_key key = sample_key(3, SYS_recvmsg);
    std::snprintf(key.comm, sizeof(key.comm), "job-%zu", i);
    drain.samples.push_back({key, 1});
  }
  auto deltas = b.build(drain, syms);
  std::map<std::string, uint64_t> by_comm;
  for (const ProfileSample& s : deltas.stacks) by_comm[s.labels->comm] += s.values[kSamples];
  EXPECT_EQ(by_comm.size(), TaskLabels::kNamedComms + 1);
  EXPECT_EQ(by_comm[std::string(kFoldedComm)], 10u);
  uint64_t total = 0;
  for (const auto& [comm, n] : by_comm) total += n;
  EXPECT_EQ(total, comms) << "folding keeps every sample";
}

TEST(IntervalBuilder, CommsOfEarlierDrainsMakeRoomForNewOnes) {
  // A long-running node: every drain's commands are new ones (CI scripts, iou-wrk-NNN).
  auto b = builder();
  auto syms = symbols();
  for (size_t round = 0; round < 4; ++round) {
    RawDrain drain;
    drain.sampling = true;
    drain.sample_stacks[3] = {kFindVmap, kCheck, kSimpleCopy, kNetlinkRecvmsg, kSysRecvmsg};
    for (size_t i = 0; i < TaskLabels::kNamedComms; ++i) {
      huc_sample_key key = sample_key(3, SYS_recvmsg);
      std::snprintf(key.comm, sizeof(key.comm), "r%zu-%zu", round, i);
      drain.samples.push_back({key, 1});
    }
    const auto deltas = b.build(drain, syms);
    size_t folded = 0;
    for (const ProfileSample& s : deltas.stacks) folded += s.labels->comm == kFoldedComm;
    // The previous drain's label sets are held until this one's end (its deltas, the store's
    // add): one drain in two names them all, the drain after folds them.
    if (round % 2 == 0) {
      EXPECT_EQ(folded, 0u) << "round " << round << ": every new command named";
    }
  }
}

TEST(IntervalBuilder, InterruptsInChecksBecomeNamedDeltas) {
  auto b = builder();
  auto syms = symbols();
  RawDrain drain;
  drain.sampling = true;
  drain.excluded[HUC_EXCLUDE_INTERRUPT] = 4;
  EXPECT_EQ(b.build(drain, syms).excluded_samples.at("interrupt"), 4u);
  drain.excluded[HUC_EXCLUDE_INTERRUPT] = 9;  // per-CPU arrays stay cumulative in the kernel
  EXPECT_EQ(b.build(drain, syms).excluded_samples.at("interrupt"), 5u);
  drain.sampling = false;
  EXPECT_TRUE(b.build(drain, syms).excluded_samples.empty()) << "only when the sampler was read";
}

TEST(IntervalBuilder, KernelDropsBecomeNamedDeltasAndEveryReasonIsPresent) {
  auto b = builder();
  auto syms = symbols();
  RawDrain drain;
  drain.drops[HUC_DROP_STACK_COLLISION] = 3;
  b.build(drain, syms);
  drain.drops[HUC_DROP_STACK_COLLISION] = 5;
  auto deltas = b.build(drain, syms);
  EXPECT_EQ(deltas.drops.at("stack_collision"), 2u);
  for (uint32_t r = 0; r < HUC_DROP_REASONS; ++r) {
    EXPECT_TRUE(deltas.drops.contains(drop_reason_name(r))) << r;
  }
  EXPECT_TRUE(deltas.drops.contains(kDropStackTruncated));
}

TEST(IntervalBuilder, HelperWalksAreNamedDeltasOnlyWhenProbesWereRead) {
  auto b = builder();
  auto syms = symbols();
  RawDrain drain;
  drain.helper_walks[HUC_WALK_LEARNED] = 10;
  EXPECT_TRUE(b.build(drain, syms).helper_walks.empty());  // no probe maps read: no series
  drain.probes = true;
  drain.helper_walks[HUC_WALK_LEARNED] = 990;
  drain.helper_walks[HUC_WALK_STACK] = 4;
  auto first = b.build(drain, syms);
  drain.helper_walks[HUC_WALK_LEARNED] = 2990;
  auto second = b.build(drain, syms);
  EXPECT_EQ(first.helper_walks.at("learned_offsets"), 990u);
  EXPECT_EQ(first.helper_walks.at("stack_walk"), 4u);
  EXPECT_EQ(first.helper_walks.at("offset_mismatch"), 0u);
  EXPECT_EQ(second.helper_walks.at("learned_offsets"), 2000u);
  EXPECT_EQ(second.helper_walks.at("stack_walk"), 0u);
}

TEST(IntervalBuilder, LatencySlotsAreGroupedPerCallsite) {
  auto b = builder();
  auto syms = symbols();
  RawDrain drain;
  huc_latency_key k{};
  k.site = direct_key(kUdpRecvmsg, SYS_recvfrom, HUC_DIR_TO_USER);
  k.slot = 7;
  drain.latency.push_back({k, 4});
  k.slot = 9;
  drain.latency.push_back({k, 1});
  auto deltas = b.build(drain, syms);
  ASSERT_EQ(deltas.latency.size(), 1u);
  EXPECT_EQ(deltas.latency[0].callsite, "udp_recvmsg");
  ASSERT_EQ(deltas.latency[0].bucket_counts.size(), static_cast<size_t>(HUC_LATENCY_SLOTS));
  EXPECT_EQ(deltas.latency[0].bucket_counts[7], 4u);
  EXPECT_EQ(deltas.latency[0].bucket_counts[9], 1u);
}

// A sub-check that ran after its check's generation was retired is counted in the next one
// (bpf/probe.bpf.c), whose drain no longer has the check's short stack: the fold of the check's
// own key, drained before, names it.
TEST(IntervalBuilder, LateSubcheckFoldsThroughTheCheckKeysStack) {
  auto b = builder();
  auto syms = symbols();
  huc_site_key key{};
  key.short_stack_id = 0x9e3779b97f4a7c15;
  key.syscall_nr = SYS_recvmsg;
  key.direction = HUC_DIR_TO_USER;
  RawDrain first;
  first.sites.push_back({key, 1, 65536});
  first.short_stacks[key.short_stack_id] = {kCheck,           kSimpleCopy,     kSkbDatagramIter,
                                            kSkbCopyDatagram, kNetlinkRecvmsg, kSysRecvmsg};
  b.build(first, syms);
  RawDrain second;
  huc_subcheck_key sub{};
  sub.site = key;
  sub.site.generation = 1;
  sub.kind = HUC_CHECK_VMALLOC;
  second.subchecks.push_back({sub, 1});
  auto deltas = b.build(second, syms);
  ASSERT_EQ(deltas.subchecks.size(), 1u);
  EXPECT_EQ(deltas.subchecks[0].callsite, "netlink_recvmsg");
  EXPECT_EQ(deltas.drops.at(kDropStackMissing), 0u);
  // Its profile stack too: the check key's (a short stack here), with the sub-check on top.
  ASSERT_EQ(deltas.stacks.size(), 1u);
  EXPECT_THAT(names(deltas.stacks[0]),
              ElementsAre("find_vmap_area", "__check_object_size", "simple_copy_to_iter",
                          "__skb_datagram_iter", "skb_copy_datagram_iter", "netlink_recvmsg",
                          "__sys_recvmsg"));
}

// A fold is kept while the symbols' generation stands (the address means the same), and made
// again once it moves (a module loaded, debuginfo arrived): no caller has to tell the builder.
TEST(IntervalBuilder, WhenTheSymbolsGenerationMovesEverythingIsFoldedAgain) {
  auto b = builder();
  auto syms = symbols();
  RawDrain drain;
  drain.probes = true;
  drain.sites.push_back({direct_key(kUnknown, SYS_recvfrom, HUC_DIR_TO_USER), 1, 64});
  EXPECT_EQ(b.build(drain, syms).checks.at(0).callsite, "[unknown]");
  syms.learn(kUnknown, "nfs_file_read", /*announce=*/false);
  EXPECT_EQ(b.build(drain, syms).checks.at(0).callsite, "[unknown]") << "folded from the cache";
  syms.learn(kUnknown, "nfs_file_read");
  EXPECT_EQ(b.build(drain, syms).checks.at(0).callsite, "nfs_file_read");
}

TEST(IntervalBuilder, FoldsUnusedForAWhileAreForgotten) {
  auto b = builder();
  auto syms = symbols();
  RawDrain drain;
  drain.sites.push_back({direct_key(kUdpRecvmsg, SYS_recvfrom, HUC_DIR_TO_USER), 1, 64});
  drain.sites.push_back({direct_key(kNetlinkRecvmsg, SYS_recvmsg, HUC_DIR_TO_USER), 1, 64});
  b.build(drain, syms);
  EXPECT_EQ(b.cached_folds(), 2u);
  RawDrain only_udp;
  only_udp.sites.push_back({direct_key(kUdpRecvmsg, SYS_recvfrom, HUC_DIR_TO_USER), 1, 64});
  for (uint64_t i = 0; i < IntervalBuilder::kFoldKeepDrains; ++i) b.build(only_udp, syms);
  EXPECT_EQ(b.cached_folds(), 1u);     // netlink_recvmsg's went, udp_recvmsg's stays
  auto deltas = b.build(drain, syms);  // and comes back folded the same
  ASSERT_EQ(deltas.checks.size(), 2u);
  EXPECT_EQ(deltas.checks[1].callsite, "netlink_recvmsg");
}

TEST(IntervalBuilder, ProbeCountsGoOutByTheKeysFullStack) {
  auto b = builder();
  auto syms = symbols();
  RawDrain drain;
  drain.probes = true;
  RawSiteCount site{direct_key(kNetlinkRecvmsg, SYS_recvmsg, HUC_DIR_TO_USER), 10, 1000,
                    kFullStackId};
  drain.sites.push_back(site);
  drain.full_stacks[kFullStackId] = {kCheck,           kSimpleCopy,     kSkbDatagramIter,
                                     kSkbCopyDatagram, kNetlinkRecvmsg, kSysRecvmsg};
  huc_subcheck_key sub{};
  sub.site = site.key;
  sub.kind = HUC_CHECK_VMALLOC;
  drain.subchecks.push_back({sub, 4});
  auto deltas = b.build(drain, syms);
  ASSERT_EQ(deltas.stacks.size(), 2u);
  const ProfileSample& calls = deltas.stacks[0];
  EXPECT_THAT(names(calls),
              ElementsAre("__check_object_size", "simple_copy_to_iter", "__skb_datagram_iter",
                          "skb_copy_datagram_iter", "netlink_recvmsg", "__sys_recvmsg"));
  EXPECT_EQ(*calls.labels, (ProfileLabels{"netlink_recvmsg", "recvmsg", "", "to_user"}));
  EXPECT_EQ(calls.values[kCalls], 10u);
  EXPECT_EQ(calls.values[kBytes], 1000u);
  EXPECT_EQ(calls.values[kSamples], 0u);
  const ProfileSample& vmalloc = deltas.stacks[1];
  EXPECT_EQ(names(vmalloc).front(), "find_vmap_area");
  EXPECT_EQ(vmalloc.stack->size(), calls.stack->size() + 1);
  EXPECT_EQ(vmalloc.labels->check, "vmap_area");
  EXPECT_EQ(vmalloc.values[kSubchecks], 4u);
  EXPECT_EQ(vmalloc.values[kCalls], 0u);

  // The next generation's key comes with the same stack again (the same content id): the same
  // stack, symbolized once, with that interval's own counts.
  RawDrain next = drain;
  next.sites[0].key.generation = 1;
  next.sites[0].calls = 15;
  next.subchecks.clear();
  auto later = b.build(next, syms);
  ASSERT_EQ(later.stacks.size(), 1u);
  EXPECT_EQ(later.stacks[0].stack, calls.stack);
  EXPECT_EQ(later.stacks[0].values[kCalls], 15u);
}

// The stack map was full when the key was created in the next generation (full_stack_id 0): its
// calls and sub-checks go out on the stack the call site had a drain ago, not on the bare call
// site.
TEST(IntervalBuilder, ACallSiteKeepsItsRecentFullStackForKeysWithoutOne) {
  auto b = builder();
  auto syms = symbols();
  RawDrain first;
  first.probes = true;
  first.sites.push_back(
      {direct_key(kNetlinkRecvmsg, SYS_recvmsg, HUC_DIR_TO_USER), 10, 1000, kFullStackId});
  first.full_stacks[kFullStackId] = {kCheck, kSimpleCopy, kNetlinkRecvmsg, kSysRecvmsg};
  const StackPtr full = b.build(first, syms).stacks.at(0).stack;
  ASSERT_EQ(full->size(), 4u);

  RawDrain second;
  second.probes = true;
  huc_site_key key = direct_key(kNetlinkRecvmsg, SYS_recvmsg, HUC_DIR_TO_USER);
  key.generation = 1;
  second.sites.push_back({key, 3, 300, 0});
  huc_subcheck_key sub{};
  sub.site = key;
  sub.kind = HUC_CHECK_PAGE;
  second.subchecks.push_back({sub, 2});
  auto deltas = b.build(second, syms);
  ASSERT_EQ(deltas.stacks.size(), 2u);
  EXPECT_EQ(deltas.stacks[0].stack, full);
  EXPECT_EQ(deltas.stacks[0].values[kCalls], 3u);
  EXPECT_THAT(names(deltas.stacks[1]),
              ElementsAre("__virt_addr_valid", "__check_object_size", "simple_copy_to_iter",
                          "netlink_recvmsg", "__sys_recvmsg"));
  EXPECT_EQ(deltas.stacks[1].values[kSubchecks], 2u);
}

TEST(IntervalBuilder, KeyWithoutFullStackGoesOutAsCheckAndCaller) {
  auto b = builder();
  auto syms = symbols();
  RawDrain drain;
  drain.sites.push_back({direct_key(kUdpRecvmsg, SYS_recvfrom, HUC_DIR_TO_USER), 3, 30});
  auto deltas = b.build(drain, syms);
  ASSERT_EQ(deltas.stacks.size(), 1u);
  EXPECT_THAT(names(deltas.stacks[0]), ElementsAre("__check_object_size", "udp_recvmsg"));
}

TEST(IntervalBuilder, SamplesGoOutByTheirStackWithTheLabelsOfTheMetrics) {
  auto b = builder();
  auto syms = symbols();
  RawDrain drain;
  drain.sampling = true;
  drain.samples.push_back({sample_key(3, SYS_recvmsg), 6});
  drain.sample_stacks[3] = {kFindVmap, kCheck, kSimpleCopy, kNetlinkRecvmsg, kSysRecvmsg};
  auto deltas = b.build(drain, syms);
  ASSERT_EQ(deltas.stacks.size(), 1u);
  EXPECT_THAT(names(deltas.stacks[0]),
              ElementsAre("find_vmap_area", "__check_object_size", "simple_copy_to_iter",
                          "netlink_recvmsg", "__sys_recvmsg"));
  ProfileLabels labels{"netlink_recvmsg", "recvmsg", "vmap_area", ""};
  labels.comm = "netperf";
  EXPECT_EQ(*deltas.stacks[0].labels, labels);
  EXPECT_EQ(deltas.stacks[0].values[kSamples], 6u);
}

TEST(IntervalBuilder, LatencyGoesOutAsSlotMidpointsOnTheSitesStack) {
  auto b = builder();
  auto syms = symbols();
  RawDrain drain;
  huc_latency_key k{};
  k.site = direct_key(kUdpRecvmsg, SYS_recvfrom, HUC_DIR_TO_USER);
  k.slot = 7;  // 128..255 ns: counted as 192
  drain.latency.push_back({k, 4});
  auto deltas = b.build(drain, syms);
  ASSERT_EQ(deltas.stacks.size(), 1u);
  EXPECT_EQ(deltas.stacks[0].values[kLatencyNs], 4u * 192u);
  EXPECT_EQ(deltas.stacks[0].labels->direction, "to_user");
}

// Names from a table; lines for some addresses, but only once `answered`: before, frames go out
// without them and count as unanswered, as SourceSymbolizer's are while its lookups run.
class PendingLines : public TableSymbolizer {
 public:
  PendingLines(std::map<uint64_t, std::string> table, std::map<uint64_t, SourceLines> lines)
      : TableSymbolizer(std::move(table)), lines_(std::move(lines)) {}
  std::optional<ResolvedFrame> frame(uint64_t addr) override {
    auto f = Symbolizer::frame(addr);
    auto it = lines_.find(addr);
    if (f && it != lines_.end()) {
      if (answered) {
        f->source = std::make_shared<const SourceLines>(it->second);
      } else {
        ++unanswered_;
      }
    }
    return f;
  }
  bool has_sources() const override { return true; }
  uint64_t unanswered() const override { return unanswered_; }
  bool answered = false;

 private:
  std::map<uint64_t, SourceLines> lines_;
  uint64_t unanswered_ = 0;
};

const SourceLines kUdpLines = {{"check_object_size", "include/linux/thread_info.h", 199},
                               {"check_copy_size", "include/linux/thread_info.h", 235},
                               {"copy_to_iter", "include/linux/uio.h", 178},
                               {"copy_linear_skb", "include/net/udp.h", 377},
                               {"udp_recvmsg", "net/ipv4/udp.c", 1950}};

PendingLines pending_lines() {
  return PendingLines({{kUdpRecvmsg, "udp_recvmsg"},
                       {kCheck, "__check_object_size"},
                       {kSysRecvmsg, "__sys_recvmsg"}},
                      {{kUdpRecvmsg, kUdpLines}});
}

RawDrain udp_probe_drain() {
  RawDrain drain;
  drain.probes = true;
  drain.sites.push_back(
      {direct_key(kUdpRecvmsg, SYS_recvfrom, HUC_DIR_TO_USER), 10, 640, kFullStackId});
  drain.full_stacks[kFullStackId] = {kCheck, kUdpRecvmsg, kSysRecvmsg};
  return drain;
}

TEST(IntervalBuilder, ACheckCountsAtOnceItsStackAndCopyWaitForTheLines) {
  auto b = builder();
  auto syms = pending_lines();
  auto first = b.build(udp_probe_drain(), syms);
  ASSERT_EQ(first.checks.size(), 1u);  // usercopy_checks_total never waits
  EXPECT_EQ(first.checks[0].calls, 10u);
  EXPECT_TRUE(first.stacks.empty());
  EXPECT_TRUE(first.copies.empty());
  EXPECT_EQ(b.held(), 1u);
  auto waiting = b.build(RawDrain{}, syms);  // still looking up
  EXPECT_TRUE(waiting.stacks.empty());
  syms.answered = true;
  auto later = b.build(RawDrain{}, syms);
  EXPECT_TRUE(later.checks.empty());
  ASSERT_EQ(later.stacks.size(), 1u);
  EXPECT_THAT(names(later.stacks[0]),
              ElementsAre("__check_object_size", "udp_recvmsg", "__sys_recvmsg"));
  ASSERT_NE((*later.stacks[0].stack)[1]->source, nullptr);
  EXPECT_EQ(*(*later.stacks[0].stack)[1]->source, kUdpLines);
  EXPECT_EQ(later.stacks[0].labels->copy, "copy_to_iter");
  EXPECT_EQ(later.stacks[0].values[kCalls], 10u);
  EXPECT_EQ(later.stacks[0].values[kBytes], 640u);
  ASSERT_EQ(later.copies.size(), 1u);
  EXPECT_EQ(later.copies[0].callsite, "udp_recvmsg");
  EXPECT_EQ(later.copies[0].syscall, "recvfrom");
  EXPECT_EQ(later.copies[0].direction, "to_user");
  EXPECT_EQ(later.copies[0].copy, "copy_to_iter");
  EXPECT_EQ(later.copies[0].calls, 10u);
  EXPECT_EQ(b.held(), 0u);
  // Finished and cached: the next drain of the same stack holds nothing back.
  auto steady = b.build(udp_probe_drain(), syms);
  ASSERT_EQ(steady.stacks.size(), 1u);
  EXPECT_EQ(steady.stacks[0].stack, later.stacks[0].stack);
  ASSERT_EQ(steady.copies.size(), 1u);
}

TEST(IntervalBuilder, AHeldStackGoesOutWithoutItsLinesAfterTheHoldLimit) {
  auto b = builder();
  auto syms = pending_lines();
  b.build(udp_probe_drain(), syms);
  for (uint64_t i = 1; i < IntervalBuilder::kHoldDrains; ++i) {
    EXPECT_TRUE(b.build(RawDrain{}, syms).stacks.empty());
  }
  auto out = b.build(RawDrain{}, syms);
  ASSERT_EQ(out.stacks.size(), 1u);
  EXPECT_EQ((*out.stacks[0].stack)[1]->source, nullptr);
  EXPECT_EQ(out.stacks[0].labels->copy, "[unknown]");  // the checks still add up over copy
  ASSERT_EQ(out.copies.size(), 1u);
  EXPECT_EQ(out.copies[0].copy, "[unknown]");
  EXPECT_EQ(out.copies[0].calls, 10u);
  EXPECT_EQ(b.held(), 0u);
}

TEST(IntervalBuilder, SamplesCountAtOnceAndReleasingHeldStacksEmptiesTheHold) {
  auto b = builder();
  auto syms = pending_lines();
  RawDrain drain;
  drain.sampling = true;
  drain.samples.push_back({sample_key(7, SYS_recvfrom), 3});
  drain.sample_stacks[7] = {kCheck, kUdpRecvmsg, kSysRecvmsg};
  auto first = b.build(drain, syms);
  ASSERT_EQ(first.samples.size(), 1u);
  EXPECT_EQ(first.samples[0].callsite, "udp_recvmsg");
  EXPECT_EQ(first.samples[0].samples, 3u);
  EXPECT_TRUE(first.stacks.empty());
  syms.answered = true;
  IntervalDeltas out;
  b.release_held(out, syms);  // a recording's last drain
  ASSERT_EQ(out.stacks.size(), 1u);
  EXPECT_EQ(out.stacks[0].values[kSamples], 3u);
  ASSERT_EQ(out.copies.size(), 1u);
  EXPECT_EQ(out.copies[0].copy, "copy_to_iter");
  EXPECT_EQ(out.copies[0].samples, 3u);
  // The fold learnt its copy too: the next drain of the stack goes out at once.
  auto next = b.build(drain, syms);
  ASSERT_EQ(next.stacks.size(), 1u);
  EXPECT_EQ(next.stacks[0].labels->copy, "copy_to_iter");
}

}  // namespace
}  // namespace hucprof
