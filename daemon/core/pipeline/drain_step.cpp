#include "core/pipeline/drain_step.h"

#include <utility>

#include "core/drain/program_cost.h"
#include "core/symbols/callsite_folder.h"

namespace hucprof {

int64_t unix_now_ns() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

double monotonic_seconds(std::chrono::steady_clock::time_point t) {
  return std::chrono::duration<double>(t.time_since_epoch()).count();
}

DrainStep::DrainStep(Config config, KallsymsSymbolizer& names, SourceSymbolizer* sources)
    : names_(names),
      sources_(sources),
      builder_(CallsiteFolder(FoldingRules::defaults())),
      aggregator_(config.top_k),
      profiles_(config.header, config.prediction_window, config.started_at),
      prediction_(config.prediction_window, config.header.sampling, config.header.latency),
      status_(std::move(config.status)) {
  // Counting starts from zero: the first drain's samples are in the prediction's window and in
  // the web view's, as they are in the cumulative profile.
  prediction_.start(config.started_at);
}

IntervalDeltas DrainStep::build(DrainSource& source, const RawDrain& raw, bool settle,
                                Notes& notes) {
  // Each moves the symbols' generation when what an address says changed, and the builder folds
  // again for it (Symbolizer::generation).
  if (names_.begin_interval()) {
    notes.kallsyms_reloaded = names_.index().size();
    if (sources_) sources_->modules_changed();
  }
  // Debuginfo that arrived (a download) changes how this drain symbolizes.
  if (sources_) sources_->begin_interval();
  Symbolizer& symbols = sources_ ? static_cast<Symbolizer&>(*sources_) : names_;
  IntervalDeltas deltas = builder_.build(raw, symbols, source.workloads());
  source.named();
  if (sources_ && settle) {
    // What waits for its lines goes out now, with them if the lookups finish in time.
    notes.lookups_late = !sources_->wait_answered(kSettleLimit);
    sources_->begin_interval();
    builder_.release_held(deltas, *sources_);
  }
  if (sources_) sources_->end_interval();
  return deltas;
}

hucprof::v1::Snapshot DrainStep::run(DrainSource& source, bool end_interval, bool settle,
                                     Notes& notes) {
  const auto started = std::chrono::steady_clock::now();
  const RawDrain raw = source.read();
  const IntervalDeltas deltas = build(source, raw, settle, notes);
  aggregator_.apply(deltas);
  const int64_t now = unix_now_ns();
  const double at = monotonic_seconds(started);  // the same drain time for both windows
  profiles_.add(deltas, now, at);
  if (end_interval) profiles_.close_interval(now);

  hucprof::v1::Snapshot snapshot = status_;
  aggregator_.fill(snapshot);
  for (const MapMemory& m : raw.map_memory) {
    auto* map = snapshot.add_bpf_maps();
    map->set_map(m.map);
    map->set_bytes(m.bytes);
  }
  snapshot.set_kallsyms_reloads(names_.reloads());
  snapshot.set_debuginfo(sources_ && sources_->has_sources());
  snapshot.set_debuginfo_held_stacks(builder_.held());
  fill_program_costs(raw.program_costs, snapshot);
  snapshot.set_busy_cpu_ns(source.busy_cpu_ns().value_or(0));
  prediction_.update(at, aggregator_.cost_totals(), snapshot.busy_cpu_ns(), snapshot);
  snapshot.set_timestamp_unix_ms(now / 1000000);
  snapshot.set_last_drain_seconds(
      std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count());
  return snapshot;
}

}  // namespace hucprof
