// What one drain costs the daemon in user space, and what start-up costs: kallsyms parsing,
// folding a drain of N raw keys (first drain: every key folded; steady state: cached folds),
// aggregation and rendering /metrics. Run: build/bench/hucprof_pipeline_bench
#include <benchmark/benchmark.h>

#include <fstream>
#include <sstream>

#include "core/drain/aggregator.h"
#include "core/drain/interval_builder.h"
#include "core/symbols/callsite_folder.h"
#include "core/symbols/kallsyms_index.h"
#include "export/metrics/prometheus_exporter.h"
#include "fake_kernel.h"

namespace hucprof {
namespace {

using bench::FakeKernel;

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

RawDrain make_drain(const FakeKernel& k, uint64_t round) { return k.probe_drain(round); }

// Steady state: the same keys every interval (the kernel hands over each interval's counts).
void BM_DrainSteadyState(benchmark::State& state) {
  FakeKernel k(static_cast<int>(state.range(0)));
  KallsymsSymbolizer symbols(parse(k.kallsyms), std::nullopt, nullptr, nullptr);
  IntervalBuilder builder(CallsiteFolder(FoldingRules::defaults()));
  Aggregator aggregator(20);
  uint64_t round = 1;
  for (auto _ : state) {
    state.PauseTiming();
    RawDrain drain = make_drain(k, round++);
    state.ResumeTiming();
    aggregator.apply(builder.build(drain, symbols));
    hucprof::v1::Snapshot snapshot;
    aggregator.fill(snapshot);
    benchmark::DoNotOptimize(snapshot);
  }
  state.counters["keys"] = static_cast<double>(state.range(0));
}
BENCHMARK(BM_DrainSteadyState)->Arg(100)->Arg(1000)->Arg(10000)->Unit(benchmark::kMicrosecond);

// Scrape: render a top-20 snapshot to the text format.
void BM_RenderMetrics(benchmark::State& state) {
  FakeKernel k(1000);
  KallsymsSymbolizer symbols(parse(k.kallsyms), std::nullopt, nullptr, nullptr);
  IntervalBuilder builder(CallsiteFolder(FoldingRules::defaults()));
  Aggregator aggregator(20);
  aggregator.apply(builder.build(make_drain(k, 1), symbols));
  hucprof::v1::Snapshot snapshot;
  aggregator.fill(snapshot);
  size_t bytes = 0;
  for (auto _ : state) bytes = render_text(snapshot_to_families(snapshot)).size();
  state.counters["bytes"] = static_cast<double>(bytes);
}
BENCHMARK(BM_RenderMetrics)->Unit(benchmark::kMicrosecond);

}  // namespace
}  // namespace hucprof

BENCHMARK_MAIN();
