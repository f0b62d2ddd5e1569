// Which workload pays, in probe mode (--probe.workloads): check keys carrying a cgroup id →
// workload labels on the checks and their profile samples, the bounded series of exact checks
// per workload, and nothing of it for keys without a cgroup.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <map>
#include <string>

#include "core/drain/aggregator.h"
#include "core/drain/interval_builder.h"
#include "table_fakes.h"

namespace hucprof {
namespace {

constexpr uint64_t kNginxCgroup = 1001;

TableWorkloads nginx_only() {
  return TableWorkloads({{kNginxCgroup, {Workload::Kind::Unit, "nginx.service", "", "", ""}}});
}

huc_site_key site_key(uint64_t cgroup) {
  huc_site_key key{};
  key.caller = FakeKernel::kUdpRecvmsg;
  key.syscall_nr = 45;  // recvfrom
  key.direction = HUC_DIR_TO_USER;
  key.cgroup_id = cgroup;
  return key;
}

RawDrain checks_drain(std::initializer_list<std::pair<uint64_t, uint64_t>> calls_by_cgroup) {
  RawDrain d;
  d.probes = true;
  for (auto [cgroup, calls] : calls_by_cgroup)
    d.sites.push_back({site_key(cgroup), calls, calls * 64, 0});
  return d;
}

TEST(WorkloadChecks, ACallSiteInTwoWorkloadsIsOneCallSiteAndTwoWorkloads) {
  IntervalBuilder b{CallsiteFolder(FoldingRules::defaults())};
  TableSymbolizer syms = FakeKernel::symbols();
  TableWorkloads names = nginx_only();
  IntervalDeltas d = b.build(checks_drain({{kNginxCgroup, 3}, {2002, 1}}), syms, &names);
  ASSERT_EQ(d.checks.size(), 2u);
  EXPECT_EQ(d.checks[0].callsite, "udp_recvmsg");
  EXPECT_EQ(d.checks[1].callsite, "udp_recvmsg");
  EXPECT_EQ(d.checks[0].workload, "nginx.service");
  EXPECT_EQ(d.checks[0].workload_kind, "unit");
  EXPECT_EQ(d.checks[1].workload, kUnknownWorkload.name);
  std::map<std::string, uint64_t> profile_calls;
  for (const ProfileSample& s : d.stacks) profile_calls[s.labels->workload] += s.values[kCalls];
  EXPECT_EQ(profile_calls,
            (std::map<std::string, uint64_t>{{"nginx.service", 3}, {kUnknownWorkload.name, 1}}));

  Aggregator agg(20);
  agg.apply(d);
  v1::Snapshot snap;
  agg.fill(snap);
  ASSERT_EQ(snap.checks_size(), 1) << "the call site's series is not split by workload";
  EXPECT_EQ(snap.checks(0).calls(), 4u);
  std::map<std::string, std::pair<uint64_t, uint64_t>> by_workload;
  for (const auto& w : snap.workload_checks()) {
    by_workload[w.workload() + "/" + w.workload_kind()] = {w.calls(), w.bytes()};
  }
  EXPECT_EQ(
      by_workload,
      (std::map<std::string, std::pair<uint64_t, uint64_t>>{
          {"nginx.service/unit", {3, 192}},
          {kUnknownWorkload.name + "/" + std::string(kind_name(kUnknownWorkload.kind)), {1, 64}}}));
}

TEST(WorkloadChecks, KeysWithoutACgroupCarryNoWorkloadEvenWithNames) {
  // --mode auto without --probe.workloads: the sampler's names exist, the probe keys have 0.
  IntervalBuilder b{CallsiteFolder(FoldingRules::defaults())};
  TableSymbolizer syms = FakeKernel::symbols();
  TableWorkloads names = nginx_only();
  IntervalDeltas d = b.build(checks_drain({{0, 5}}), syms, &names);
  ASSERT_EQ(d.checks.size(), 1u);
  EXPECT_EQ(d.checks[0].workload, "");
  EXPECT_EQ(names.asked, 0);
  Aggregator agg(20);
  agg.apply(d);
  v1::Snapshot snap;
  agg.fill(snap);
  EXPECT_EQ(snap.workload_checks_size(), 0);
}

TEST(WorkloadChecks, TheTopKWorkloadsByChecksAreNamedTheRestIsOther) {
  Aggregator agg(1);
  auto interval = [&](const std::string& workload, uint64_t calls) {
    IntervalDeltas d;
    d.checks.push_back(
        {"udp_recvmsg", "recvfrom", "to_user", calls, calls * 10, workload, "cgroup"});
    agg.apply(d);
    v1::Snapshot snap;
    agg.fill(snap);
    std::map<std::string, uint64_t> calls_by;
    for (const auto& w : snap.workload_checks()) calls_by[w.workload()] = w.calls();
    return calls_by;
  };
  using Series = std::map<std::string, uint64_t>;
  EXPECT_EQ(interval("/job-1", 5), (Series{{"/job-1", 5}}));
  EXPECT_EQ(interval("/job-2", 9), (Series{{"/job-2", 9}}));
  EXPECT_EQ(interval("/job-1", 1), (Series{{"/job-2", 9}, {"other", 1}}));
}

}  // namespace
}  // namespace hucprof
