// What one drain costs the daemon in user space, and what start-up costs: kallsyms parsing,
// folding a drain of N raw keys (first drain: every key folded; steady state: cached folds),
// aggregation and rendering /metrics. Run: build/bench/hucprof_pipeline_bench
#include <benchmark/benchmark.h>

#include <fstream>
#include <sstream>

#include "core/aggregator.h"
#include "core/callsite_folder.h"
#include "core/interval_builder.h"
#include "core/kallsyms_index.h"
#include "export/prometheus_exporter.h"

namespace hucprof {
namespace {

// A synthetic kernel: N call-site functions, N copy helpers, the check functions.
struct FakeKernel {
  std::string kallsyms;
  std::vector<uint64_t> callers;
  uint64_t check = 0x0;

  explicit FakeKernel(int n) {
    std::ostringstream out;
    uint64_t addr = 0xffffffff81000000ull;
    out << std::hex;
    check = addr;
    out << addr << " T __check_object_size\n";
    addr += 0x400;
    for (int i = 0; i < n; ++i) {
      callers.push_back(addr + 0x20);
      out << addr << " t callsite_fn_" << std::dec << i << std::hex << "\n";
      addr += 0x300;
    }
    out << addr << " T _etext\n";
    kallsyms = out.str();
  }
};

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

RawDrain make_drain(const FakeKernel& k, uint64_t round) {
  RawDrain d;
  d.probes = true;
  for (size_t i = 0; i < k.callers.size(); ++i) {
    huc_site_key key{};
    key.caller = k.callers[i];
    key.syscall_nr = static_cast<int32_t>(i % 50);
    key.direction = static_cast<uint8_t>(i % 2);
    d.sites.push_back({key, 1000 + round % 7, 64000 + i, 0});  // per-interval counts
  }
  return d;
}

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
