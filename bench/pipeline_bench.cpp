// What one drain costs the daemon in user space, and what start-up costs: kallsyms parsing,
// the drain of N raw keys (DrainStep, steady state: cached folds) and rendering /metrics. Run:
// build/bench/hucprof_pipeline_bench
#include <benchmark/benchmark.h>

#include <fstream>
#include <sstream>

#include "core/pipeline/drain_step.h"
#include "core/symbols/kallsyms_index.h"
#include "export/metrics/prometheus_exporter.h"
#include "fake_kernel.h"

namespace hucprof {
namespace {

using bench::FakeDrains;
using bench::FakeKernelSource;

KallsymsIndex parse(const std::string& text) {
  std::istringstream in(text);
  return KallsymsIndex::parse(in);
}

void BM_ParseRealKallsyms(benchmark::State& state) {
  std::ifstream f("/proc/kallsyms");
  if (!f) {
    state.SkipWithError("/proc/kallsyms unreadable");
    return;
  }
  std::stringstream ss;
  ss << f.rdbuf();
  const std::string text = ss.str();
  size_t symbols = 0;
  for (auto _ : state) symbols = parse(text).size();
  state.counters["symbols"] = static_cast<double>(symbols);
}
BENCHMARK(BM_ParseRealKallsyms)->Unit(benchmark::kMillisecond);

// Steady state: the same keys every interval (the kernel hands over each interval's counts),
// probe mode or sampling, through the daemon's whole drain (DrainStep: fold, aggregate, keep the
// stacks, snapshot, prediction); the synthetic kernel's building of each drain is included.
void drain_steady_state(benchmark::State& state, FakeKernelSource::Mode mode) {
  FakeDrains drains(static_cast<int>(state.range(0)), mode);
  for (auto _ : state) {
    hucprof::v1::Snapshot snapshot = drains.next();
    benchmark::DoNotOptimize(snapshot);
  }
  state.counters["keys"] = static_cast<double>(state.range(0));
}

void BM_DrainSteadyState(benchmark::State& state) {
  drain_steady_state(state, FakeKernelSource::Mode::Probes);
}
BENCHMARK(BM_DrainSteadyState)->Arg(100)->Arg(1000)->Arg(10000)->Unit(benchmark::kMicrosecond);

void BM_SamplingDrainSteadyState(benchmark::State& state) {
  drain_steady_state(state, FakeKernelSource::Mode::Sampling);
}
BENCHMARK(BM_SamplingDrainSteadyState)->Arg(100)->Arg(1000)->Unit(benchmark::kMicrosecond);

// Scrape: render a top-20 snapshot to the text format.
void BM_RenderMetrics(benchmark::State& state) {
  FakeDrains drains(1000, FakeKernelSource::Mode::Probes);
  const hucprof::v1::Snapshot snapshot = drains.next();
  size_t bytes = 0;
  for (auto _ : state) bytes = render_text(snapshot_to_families(snapshot)).size();
  state.counters["bytes"] = static_cast<double>(bytes);
}
BENCHMARK(BM_RenderMetrics)->Unit(benchmark::kMicrosecond);

// What holding the snapshot as a protobuf costs: each drain copies it once (the status in) and
// each scrape and profile request once more (ProfilingPipeline::latest()). Arg: --top-k, over
// the 1000 call sites of a probe drain; beside BM_DrainSteadyState/1000, the share of a drain a
// plain struct could save at most.
void BM_SnapshotCopy(benchmark::State& state) {
  DrainStep::Config config = FakeDrains::config(FakeKernelSource::Mode::Probes);
  config.top_k = static_cast<size_t>(state.range(0));
  FakeDrains drains(1000, FakeKernelSource::Mode::Probes, std::move(config));
  const hucprof::v1::Snapshot snapshot = drains.next();
  for (auto _ : state) {
    hucprof::v1::Snapshot copy = snapshot;
    benchmark::DoNotOptimize(copy);
  }
  state.counters["series"] = static_cast<double>(snapshot.checks_size());
}
BENCHMARK(BM_SnapshotCopy)->Arg(20)->Arg(1000)->Unit(benchmark::kMicrosecond);

}  // namespace
}  // namespace hucprof

BENCHMARK_MAIN();
