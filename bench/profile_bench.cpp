// Profiles: what one /debug/pprof/usercopy request costs on a daemon holding N stacks (goal:
// <= 200 ms at 10 000), what the web view costs, and whether a profile request in flight slows
// the drain loop (it must not: requests copy the store under its lock, then encode unlocked).
// `transient_heap_bytes`: the most heap one request (or page) held beyond what was held before
// it, its response included (issue 40: a fetch must not hold several copies of the profile).
// Run: build/bench/hucprof_profile_bench
#include <benchmark/benchmark.h>

#include <atomic>
#include <chrono>
#include <thread>

#include "core/drain/aggregator.h"
#include "core/drain/drain_gate.h"
#include "core/drain/interval_builder.h"
#include "core/profile/profile_store.h"
#include "core/symbols/callsite_folder.h"
#include "core/symbols/symbolizer.h"
#include "export/views/pprof_handler.h"
#include "export/views/web_view.h"
#include "fake_kernel.h"
#include "heap_peak.h"

namespace hucprof {
namespace {

// The pipeline of the daemon (ProfilingPipeline::drain without the BPF maps) over a fake
// kernel whose sampled stacks are all distinct.
struct Pipeline {
  explicit Pipeline(int stacks)
      : kernel(stacks),
        symbols(kernel.index(), std::nullopt, nullptr, nullptr),
        builder(CallsiteFolder(FoldingRules::defaults())),
        aggregator(20),
        store(header()) {}

  static StackProfile header() {
    StackProfile h;
    h.sampling = true;
    h.sample_period_ns = 10101010;
    h.kernel = "bench";
    return h;
  }

  void drain(const RawDrain& raw, int64_t now_ns) {
    DrainGate::Draining draining(gate);
    const IntervalDeltas deltas = builder.build(raw, symbols);
    aggregator.apply(deltas);
    hucprof::v1::Snapshot snapshot;
    aggregator.fill(snapshot);
    store.add(deltas, now_ns);
    store.close_interval(now_ns);
    benchmark::DoNotOptimize(snapshot);
  }

  bench::FakeKernel kernel;
  KallsymsSymbolizer symbols;
  IntervalBuilder builder;
  Aggregator aggregator;
  ProfileStore store;
  DrainGate gate;
  uint64_t round = 0;
  int64_t now_ns = 0;

  void next_drain() { drain(kernel.sample_drain(++round), now_ns += 10'000'000'000); }
};

// The most heap `serve` holds at once beyond what was held before it, what it returns included.
template <typename Serve>
double transient_heap_bytes(Serve serve) {
  const size_t before = bench::reset_heap_peak();
  {
    auto response = serve();
    benchmark::DoNotOptimize(response);
  }
  const size_t peak = bench::heap_peak();
  return peak > before ? static_cast<double>(peak - before) : 0.0;  // never a wrapped size_t
}

HttpRequest profile_request() {
  HttpRequest r;
  r.method = "GET";
  r.path = "/debug/pprof/usercopy";
  return r;
}

void BM_ProfileRequest(benchmark::State& state) {
  Pipeline p(static_cast<int>(state.range(0)));
  p.next_drain();
  p.next_drain();
  const HttpHandler handler =
      make_pprof_handler({[&] { return p.store.cumulative(); }, [] {}, {}, {}, {}});
  size_t bytes = 0;
  for (auto _ : state) bytes = handler(profile_request()).body.size();
  state.counters["stacks"] = static_cast<double>(p.store.cumulative().samples.size());
  state.counters["gzipped_bytes"] = static_cast<double>(bytes);
  state.counters["transient_heap_bytes"] =
      transient_heap_bytes([&] { return handler(profile_request()); });
}
BENCHMARK(BM_ProfileRequest)->Arg(1000)->Arg(10000)->Unit(benchmark::kMillisecond)->UseRealTime();

void BM_WebView(benchmark::State& state) {
  Pipeline p(static_cast<int>(state.range(0)));
  p.next_drain();
  p.next_drain();
  size_t bytes = 0;
  // The window is summed per request, as the handler does.
  for (auto _ : state) {
    WebViewInput in{hucprof::v1::Snapshot(), p.store.window(), "sample", std::chrono::seconds(10)};
    bytes = render_web_view(in).size();
  }
  state.counters["html_bytes"] = static_cast<double>(bytes);
  state.counters["transient_heap_bytes"] = transient_heap_bytes([&] {
    WebViewInput in{hucprof::v1::Snapshot(), p.store.window(), "sample", std::chrono::seconds(10)};
    return render_web_view(in);
  });
}
BENCHMARK(BM_WebView)->Arg(1000)->Arg(10000)->Unit(benchmark::kMillisecond)->UseRealTime();

// One steady-state drain of N keys (fold cached), alone (second arg 0) or while another thread
// serves profile requests back to back from the same store, stepping aside during drains as the
// daemon's do (1), or not (2). Wall time: what the drain loop sees.
void BM_DrainWithProfileInFlight(benchmark::State& state) {
  Pipeline p(static_cast<int>(state.range(0)));
  p.next_drain();
  ProfileSource source{[&] { return p.store.cumulative(); }, [] {}, {}, {}, {}};
  if (state.range(1) == 1) source.pause = [&] { p.gate.wait_while_draining(); };
  const HttpHandler handler = make_pprof_handler(source);
  std::atomic<bool> stop{false};
  std::atomic<uint64_t> served{0};
  std::thread requests;
  if (state.range(1)) {
    requests = std::thread([&] {
      while (!stop) {
        benchmark::DoNotOptimize(handler(profile_request()));
        ++served;
      }
    });
  }
  for (auto _ : state) {
    state.PauseTiming();
    RawDrain raw = p.kernel.sample_drain(++p.round);
    state.ResumeTiming();
    p.drain(raw, p.now_ns += 10'000'000'000);
  }
  stop = true;
  if (requests.joinable()) requests.join();
  state.counters["profiles_served"] = static_cast<double>(served);
}
BENCHMARK(BM_DrainWithProfileInFlight)
    ->Args({10000, 0})
    ->Args({10000, 1})
    ->Args({10000, 2})
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime();

}  // namespace
}  // namespace hucprof

BENCHMARK_MAIN();
