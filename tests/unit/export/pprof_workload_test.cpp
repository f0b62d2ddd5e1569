// Which workload pays, in the profile: every check sample names its workload, each workload's
// busy CPU is a rest-of-busy sample under its name, and what reads the file back (hucprof
// report, the web view) finds the same numbers. Google's pprof reads the labels in the host tier
// (tests/host/test_workloads.py).
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <map>
#include <string>

#include "core/cost/usercopy_cost.h"
#include "core/symbols/stack_interner.h"
#include "export/pprof/pprof_reader.h"
#include "export/views/pprof_writer.h"
#include "export/views/report_text.h"

namespace hucprof {
namespace {

class PprofWorkloads : public testing::Test {
 protected:
  // __check_object_size called from udp_recvmsg.
  StackPtr udp_stack() {
    return interner_.stack({interner_.frame({"__check_object_size", "", 0x25, 0x6c9275}),
                            interner_.frame({"udp_recvmsg", "", 0x1a4, 0xb1d3a4})});
  }
  // 30 check samples in nginx.service, 10 in a container; their busy CPU, and 50 busy kernel
  // samples whose workload the kernel could not count.
  StackProfile profile() {
    const StackPtr stack = udp_stack();
    const LabelsPtr base = interner_.labels("udp_recvmsg", "recvfrom", "object", "");
    StackProfile p;
    p.sampling = true;
    p.sample_period_ns = 10101010;
    p.sampled_by_context = {{"kernel", 450}, {"user", 500}, {"idle", 9000}};
    p.excluded_samples = {{"interrupt", 3}};
    ProfileSample nginx{stack, interner_.with_workload(base, "nginx.service", "unit"), {}};
    nginx.values[kSamples] = 30;
    ProfileSample docker{
        stack, interner_.with_workload(base, "docker:0123456789ab", "container"), {}};
    docker.values[kSamples] = 10;
    p.samples = {nginx, docker};
    p.busy_by_workload["nginx.service"] = {"unit", 300, 400, 2};
    p.busy_by_workload["docker:0123456789ab"] = {"container", 100, 100, 1};
    return p;
  }

  StackInterner interner_;
};

TEST_F(PprofWorkloads, ReadsBackEachWorkloadsBusyCpuAndTheNodesTotals) {
  const StackProfile original = profile();
  auto read = read_pprof(encode_pprof_gzip(original));
  ASSERT_TRUE(read.ok()) << read.error().text;
  const StackProfile& back = read.value();
  EXPECT_EQ(back.sampled_by_context.at("kernel"), 450u);
  EXPECT_EQ(back.sampled_by_context.at("user"), 500u);
  EXPECT_EQ(back.excluded_samples, original.excluded_samples);
  ASSERT_EQ(back.busy_by_workload.size(), 2u);
  for (const auto& [name, busy] : original.busy_by_workload) {
    const WorkloadBusy& b = back.busy_by_workload.at(name);
    EXPECT_EQ(b.kind, busy.kind) << name;
    EXPECT_EQ(b.kernel, busy.kernel) << name;
    EXPECT_EQ(b.user, busy.user) << name;
    EXPECT_EQ(b.interrupts, busy.interrupts) << name;
  }
  ASSERT_EQ(back.samples.size(), 2u);
  EXPECT_EQ(back.samples[0].labels->workload, "nginx.service");
  EXPECT_EQ(back.samples[0].labels->workload_kind, "unit");
}

// Every busy sample is in exactly one pprof sample: per workload, and without a workload label
// only what no workload was counted for.
TEST_F(PprofWorkloads, RestSamplesSplitBusyCpuByWorkload) {
  const pprof::Profile out = to_pprof(profile());
  std::map<std::string, int64_t> samples_by_workload;
  int64_t total = 0;
  for (const auto& s : out.sample()) {
    std::string workload = "(none)";
    for (const auto& l : s.label()) {
      if (out.string_table(l.key()) == "workload") workload = out.string_table(l.str());
    }
    samples_by_workload[workload] += s.value(0);
    total += s.value(0);
  }
  EXPECT_EQ(total, 950) << "busy = kernel + user, as before workloads";
  EXPECT_EQ(samples_by_workload,
            (std::map<std::string, int64_t>{
                {"nginx.service", 700}, {"docker:0123456789ab", 200}, {"(none)", 50}}));
}

TEST_F(PprofWorkloads, TheReportListsWhichWorkloadsPay) {
  const StackProfile p = profile();
  const UsercopyCost cost = summarize_cost(p, 0);
  ASSERT_EQ(cost.workloads.size(), 2u);
  EXPECT_EQ(cost.workloads[0].workload, "nginx.service");
  EXPECT_DOUBLE_EQ(cost.workloads[0].share_of_checks, 0.75);
  ASSERT_TRUE(cost.workloads[0].share_of_busy);
  EXPECT_DOUBLE_EQ(*cost.workloads[0].share_of_busy, 30.0 / 700.0);
  EXPECT_DOUBLE_EQ(cost.workloads[1].share_of_checks, 0.25);
  const std::string report = render_report(p, cost, 0);
  EXPECT_THAT(report, testing::HasSubstr("which workloads pay"));
  // ± the larger side of Wilson's 95 % interval at design effect 1.5, computed with Python:
  // 30 of 40 samples in the checks 18.83, 30 of 700 busy samples 2.24 (rounded up).
  EXPECT_THAT(report,
              testing::ContainsRegex(
                  "75\\.0 % ±18\\.9 +30 +0\\.303 s +4\\.3 % ±2\\.3 +nginx\\.service +unit"));
}

// Probe mode with --probe.workloads: the calls carry the workload; a profile without sampling
// shares the checks out by calls, and the file keeps the labels.
TEST_F(PprofWorkloads, AProbeProfileListsWorkloadsByTheirShareOfTheCalls) {
  const StackPtr stack = udp_stack();
  const LabelsPtr base = interner_.labels("udp_recvmsg", "recvfrom", "", "to_user");
  StackProfile p;
  p.probes = true;
  for (auto [workload, calls] : {std::pair{"/hucvm-three", 3000}, {"/hucvm-one", 1000}}) {
    ProfileSample s{stack, interner_.with_workload(base, workload, "cgroup"), {}};
    s.values[kCalls] = static_cast<uint64_t>(calls);
    s.values[kBytes] = static_cast<uint64_t>(calls) * 64;
    p.samples.push_back(s);
  }
  auto read = read_pprof(encode_pprof_gzip(p));
  ASSERT_TRUE(read.ok()) << read.error().text;
  const UsercopyCost cost = summarize_cost(read.value(), 0);
  ASSERT_EQ(cost.workloads.size(), 2u);
  EXPECT_EQ(cost.workloads[0].workload, "/hucvm-three");
  EXPECT_EQ(cost.workloads[0].calls, 3000u);
  EXPECT_DOUBLE_EQ(cost.workloads[0].share_of_checks, 0.75);
  EXPECT_FALSE(cost.workloads[0].share_of_busy);
  const std::string report = render_report(read.value(), cost, 0);
  EXPECT_THAT(report, testing::HasSubstr("which workloads run the checks"));
  EXPECT_THAT(report, testing::ContainsRegex("75\\.0 % +3,000 +/hucvm-three +cgroup"));
  EXPECT_THAT(report, testing::ContainsRegex("25\\.0 % +1,000 +/hucvm-one +cgroup"));
  EXPECT_THAT(report, testing::HasSubstr("exact counts")) << "probes count, they do not sample";
}

}  // namespace
}  // namespace hucprof
