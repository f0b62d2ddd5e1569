// Which workload pays: sampled cgroup ids → workload labels on the samples, each workload's busy
// CPU (the denominator of its share), and the bounded workload families of the aggregator.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <map>
#include <string>

#include "core/drain/aggregator.h"
#include "core/drain/interval_builder.h"
#include "core/symbols/stack_interner.h"
#include "table_fakes.h"

namespace hucprof {
namespace {

constexpr uint64_t kNginx = 1001, kDocker = 1002, kGone = 1003;
constexpr uint64_t kStack = 77;

TableWorkloads workloads() {
  return TableWorkloads(
      {{kNginx, {Workload::Kind::Unit, "nginx.service", "", "", ""}},
       {kDocker, {Workload::Kind::Container, "docker:0123456789ab", "", "", ""}}});
}

RawDrain samples_drain(std::initializer_list<std::pair<uint64_t, uint64_t>> samples_by_cgroup) {
  RawDrain d;
  d.sampling = true;
  d.sample_stacks[kStack] = {FakeKernel::kCheck, FakeKernel::kUdpRecvmsg};
  for (auto [cgroup, n] : samples_by_cgroup) {
    huc_sample_key key{};
    key.stack_id = kStack;
    key.cgroup_id = cgroup;
    key.syscall_nr = -1;
    d.samples.push_back({key, n});
  }
  return d;
}

huc_busy_key busy_key(uint64_t cgroup, uint8_t context, bool excluded = false) {
  huc_busy_key key{};
  key.cgroup_id = cgroup;
  key.context = context;
  key.excluded = excluded;
  return key;
}

TEST(WorkloadSamples, OneStackInTwoWorkloadsIsTwoSamplesWithTheirWorkloadLabels) {
  IntervalBuilder b{CallsiteFolder(FoldingRules::defaults())};
  TableSymbolizer syms = FakeKernel::symbols();
  TableWorkloads names = workloads();
  IntervalDeltas d = b.build(samples_drain({{kNginx, 3}, {kDocker, 1}}), syms, &names);
  ASSERT_EQ(d.stacks.size(), 2u);
  std::map<std::string, uint64_t> by_workload;
  for (const ProfileSample& s : d.stacks) by_workload[s.labels->workload] += s.values[kSamples];
  EXPECT_EQ(by_workload,
            (std::map<std::string, uint64_t>{{"docker:0123456789ab", 1}, {"nginx.service", 3}}));
  EXPECT_EQ(d.stacks[0].stack, d.stacks[1].stack) << "one stack, interned once";
  EXPECT_EQ(d.stacks[0].labels->callsite, "udp_recvmsg");
  ASSERT_EQ(d.samples.size(), 2u);
  EXPECT_EQ(d.samples[0].workload, "nginx.service");
  EXPECT_EQ(d.samples[0].workload_kind, "unit");
  EXPECT_EQ(d.samples[1].workload_kind, "container");
}

TEST(WorkloadSamples, WithoutNamesSamplesCarryNoWorkload) {
  IntervalBuilder b{CallsiteFolder(FoldingRules::defaults())};
  TableSymbolizer syms = FakeKernel::symbols();
  RawDrain d = samples_drain({{kNginx, 3}});
  d.busy.push_back({busy_key(kNginx, HUC_CTX_KERNEL), 10});
  IntervalDeltas out = b.build(d, syms);
  ASSERT_EQ(out.stacks.size(), 1u);
  EXPECT_EQ(out.stacks[0].labels->workload, "");
  EXPECT_TRUE(out.busy_by_workload.empty());
}

TEST(WorkloadSamples, BusySamplesAreSplitByWorkloadAndContext) {
  IntervalBuilder b{CallsiteFolder(FoldingRules::defaults())};
  TableSymbolizer syms = FakeKernel::symbols();
  TableWorkloads names = workloads();
  RawDrain d = samples_drain({});
  d.busy.push_back({busy_key(kNginx, HUC_CTX_KERNEL), 40});
  d.busy.push_back({busy_key(kNginx, HUC_CTX_KERNEL, true), 2});
  d.busy.push_back({busy_key(kNginx, HUC_CTX_USER), 50});
  d.busy.push_back({busy_key(kGone, HUC_CTX_USER), 7});
  IntervalDeltas out = b.build(d, syms, &names);
  ASSERT_EQ(out.busy_by_workload.size(), 2u);
  const WorkloadBusy& nginx = out.busy_by_workload.at("nginx.service");
  EXPECT_EQ(nginx.kind, "unit");
  EXPECT_EQ(nginx.kernel, 42u) << "an interrupt in a check is kernel CPU";
  EXPECT_EQ(nginx.interrupts, 2u);
  EXPECT_EQ(nginx.user, 50u);
  EXPECT_EQ(nginx.busy(), 92u);
  EXPECT_EQ(out.busy_by_workload.at(kUnknownWorkload.name).user, 7u)
      << "a cgroup gone before the drain still counts, as unknown";
}

TEST(WorkloadSamples, TheAggregatorNamesTheTopKWorkloadsAndSumsTheRestIntoOther) {
  Aggregator agg(1);
  IntervalDeltas d;
  d.samples.push_back({"udp_recvmsg", "recvfrom", "object", 30, "nginx.service", "unit"});
  d.samples.push_back(
      {"udp_recvmsg", "recvfrom", "object", 10, "docker:0123456789ab", "container"});
  d.busy_by_workload["nginx.service"] = {"unit", 200, 100, 0};
  d.busy_by_workload["docker:0123456789ab"] = {"container", 50, 50, 0};
  d.busy_by_workload["idle.slice/cron.service"] = {"unit", 5, 0, 0};
  agg.apply(d);
  hucprof::v1::Snapshot snap;
  agg.fill(snap);
  std::map<std::string, std::pair<uint64_t, uint64_t>> series;
  for (const auto& w : snap.workloads()) {
    series[w.workload() + "/" + w.workload_kind()] = {w.check_samples(), w.busy_samples()};
  }
  EXPECT_EQ(series, (std::map<std::string, std::pair<uint64_t, uint64_t>>{
                        {"nginx.service/unit", {30, 300}}, {"other/", {10, 105}}}));
}

// A workload that leaves the top-K is no longer exported, and what it does afterwards goes to
// "other": a node that makes a cgroup per job keeps top_k + 1 series, and nothing moves between
// series (other's rate() never jumps by what a workload had before it left).
TEST(WorkloadSamples, AWorkloadLeavingTheTopKEndsItsSeries) {
  Aggregator agg(1);
  auto interval = [&](const std::string& workload, uint64_t samples) {
    IntervalDeltas d;
    d.samples.push_back({"udp_recvmsg", "recvfrom", "object", samples, workload, "cgroup"});
    d.busy_by_workload[workload] = {"cgroup", samples * 10, 0, 0};
    agg.apply(d);
    hucprof::v1::Snapshot snap;
    agg.fill(snap);
    std::map<std::string, uint64_t> checks;
    for (const auto& w : snap.workloads()) checks[w.workload()] = w.check_samples();
    return checks;
  };
  using Series = std::map<std::string, uint64_t>;
  EXPECT_EQ(interval("/job-1", 5), (Series{{"/job-1", 5}}));
  EXPECT_EQ(interval("/job-2", 9), (Series{{"/job-2", 9}}));
  EXPECT_EQ(interval("/job-1", 1), (Series{{"/job-2", 9}, {"other", 1}}));
  EXPECT_EQ(interval("/job-3", 20), (Series{{"/job-3", 20}, {"other", 1}}));
  EXPECT_EQ(interval("/job-1", 30), (Series{{"/job-1", 35}, {"other", 1}}))
      << "back in the top-K, /job-1 resumes from what it had while named";
}

TEST(WorkloadSamples, AnEndedWorkloadsLabelSetsAreReleasedOnceNobodyHoldsThem) {
  StackInterner interner;
  const LabelsPtr base = interner.labels("udp_recvmsg", "recvfrom", "object", "");
  const size_t before = interner.label_sets();
  LabelsPtr held = interner.with_workload(base, "/job-1", "cgroup");
  for (int i = 2; i < 100; ++i) interner.with_workload(base, "/job-" + std::to_string(i), "cgroup");
  EXPECT_EQ(interner.label_sets(), before + 99);
  interner.release_unused();
  EXPECT_EQ(interner.label_sets(), before + 1) << "only /job-1's, still held, and the base";
  EXPECT_EQ(interner.with_workload(base, "/job-1", "cgroup"), held) << "still one pointer";
  EXPECT_EQ(interner.with_workload(base, "/job-2", "cgroup")->workload, "/job-2");
}

}  // namespace
}  // namespace hucprof
