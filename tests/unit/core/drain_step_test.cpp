// The drain's whole sequence (DrainStep) on the benchmarks' synthetic kernel: what the kernel
// counted comes out of the snapshot and the profiles, drain after drain.
#include "core/pipeline/drain_step.h"

#include <gtest/gtest.h>

#include <chrono>
#include <map>
#include <string>

#include "fake_kernel.h"

namespace hucprof {
namespace {

using bench::FakeDrains;
using bench::FakeKernel;
using bench::FakeKernelSource;

std::map<std::string, uint64_t> drained_calls(const v1::Snapshot& s) {
  std::map<std::string, uint64_t> out;
  for (const auto& c : s.checks()) out[c.callsite()] += c.calls();
  return out;
}

TEST(DrainStep, ProbeDrainsAddUpByCallSiteAndKeepTheirStacks) {
  DrainStep::Config config = FakeDrains::config(FakeKernelSource::Mode::Probes);
  config.status.mutable_build()->set_version("drain-step-test");
  FakeDrains drains(3, FakeKernelSource::Mode::Probes, std::move(config));
  drains.next();
  const v1::Snapshot s = drains.next();

  // Each call-site function's key counts 1000 + round % 7 calls a round: 1001 + 1002.
  EXPECT_EQ(drained_calls(s),
            (std::map<std::string, uint64_t>{
                {"callsite_fn_0", 2003}, {"callsite_fn_1", 2003}, {"callsite_fn_2", 2003}}));
  EXPECT_EQ(s.intervals(), 2u);
  EXPECT_EQ(s.build().version(), "drain-step-test") << "the status goes into every snapshot";
  EXPECT_EQ(drains.source.rounds(), 2u);
  EXPECT_EQ(drains.source.named_drains(), 2u)
      << "the source hears that each drain named what it read";
  EXPECT_EQ(s.kallsyms_reloads(), 0u);
  EXPECT_FALSE(s.debuginfo());

  uint64_t profiled = 0;
  for (const ProfileSample& sample : drains.step.profiles().cumulative().samples) {
    profiled += sample.values[kCalls];
  }
  EXPECT_EQ(profiled, 3u * 2003) << "the profile since start holds every call";
}

TEST(DrainStep, SamplingDrainsPredictFromTheirOwnCounters) {
  FakeDrains drains(4, FakeKernelSource::Mode::Sampling);
  drains.next();
  const v1::Snapshot s = drains.next();

  std::map<std::string, uint64_t> contexts;
  for (const auto& c : s.sampled()) contexts[c.context()] = c.samples();
  // Call-site function i takes 1 + i % 7 samples a round: 10 a round, 20 in two.
  EXPECT_EQ(s.check_samples(), 20u);
  ASSERT_EQ(s.predictions_size(), 1);
  const v1::CostSharePrediction& p = s.predictions(0);
  EXPECT_EQ(p.estimator(), "sampling");
  EXPECT_DOUBLE_EQ(p.in_checks(), 20);
  EXPECT_DOUBLE_EQ(p.busy(), static_cast<double>(contexts["kernel"] + contexts["user"]))
      << "counted from the start, idle left out";
}

TEST(DrainStep, ChangedModulesReadKallsymsAgainAndSaySo) {
  const FakeKernel kernel(2);
  int lists = 0;
  KallsymsSymbolizer symbols(
      kernel.index(), std::string("a 1 0 - Live 0x0\n"), [&] { return kernel.index(); },
      [&]() -> std::optional<std::string> {
        return ++lists == 1 ? "a 1 0 - Live 0x0\n" : "a 1 0 - Live 0x0\nb 1 0 - Live 0x0\n";
      });
  DrainStep step(FakeDrains::config(FakeKernelSource::Mode::Probes), symbols, nullptr);
  FakeKernelSource source(kernel, FakeKernelSource::Mode::Probes);
  DrainStep::Notes unchanged;
  step.run(source, true, false, unchanged);
  EXPECT_FALSE(unchanged.kallsyms_reloaded);
  DrainStep::Notes changed;
  const v1::Snapshot s = step.run(source, true, false, changed);
  ASSERT_TRUE(changed.kallsyms_reloaded);
  EXPECT_EQ(*changed.kallsyms_reloaded, kernel.index().size());
  EXPECT_EQ(s.kallsyms_reloads(), 1u);
}

}  // namespace
}  // namespace hucprof
