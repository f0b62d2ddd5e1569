#include "app/profiling_pipeline.h"

#include <malloc.h>

#include <chrono>

#include <spdlog/spdlog.h>

#include "app/attach_sessions.h"
#include "app/build_info.h"
#include "app/debuginfo_report.h"
#include "core/cost/speedup_prediction.h"
#include "core/drain/aggregator.h"
#include "core/drain/interval_builder.h"
#include "core/files/file_text.h"
#include "core/kernel/attach_plan.h"
#include "core/kernel/cpu_time.h"
#include "core/kernel/proc_stat.h"
#include "core/symbols/callsite_folder.h"
#include "core/symbols/source_symbolizer.h"
#include "core/symbols/symbolizer.h"
#include "debuginfo/kernel_debuginfo.h"
#include "kernel_edge/cgroup_names_session.h"
#include "kernel_edge/probe_session.h"
#include "kernel_edge/program_barrier.h"
#include "kernel_edge/program_stats.h"
#include "kernel_edge/sampling_session.h"
#include "workload/cgroup_workloads.h"

namespace hucprof {

namespace {
// How long a recording's first and last drain wait for the debuginfo lookups: seconds of
// lookups are a drain full of new call sites spread over the whole kernel.
constexpr std::chrono::milliseconds kSettleLimit{10000};
}  // namespace

int64_t unix_now_ns() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

ProfilingPipeline::~ProfilingPipeline() = default;

namespace {

double monotonic_seconds(std::chrono::steady_clock::time_point t) {
  return std::chrono::duration<double>(t.time_since_epoch()).count();
}

}  // namespace

Result<std::unique_ptr<ProfilingPipeline>> ProfilingPipeline::start(const RunOptions& options,
                                                                    KernelView& kernel) {
  std::unique_ptr<ProfilingPipeline> self(new ProfilingPipeline());
  hucprof::v1::Snapshot& status = self->status_;
  status.set_hardened_usercopy_enabled(kernel.hardened.enabled);
  status.set_hardened_usercopy_reason(kernel.hardened.reason);
  auto* build = status.mutable_build();
  build->set_version(hucprof_version());
  build->set_libbpf(libbpf_version());
  build->set_kernel(kernel.facts.release);

  const AttachPlan plan = plan_attach(kernel, options.attach);
  self->barrier_ = std::make_unique<ProgramBarrier>();
  if (!self->barrier_->error().empty()) {
    spdlog::warn("drains wait by sleeping between generations: {}", self->barrier_->error());
  }
  AttachedSessions attached = attach_sessions(load_sessions(plan, options.attach.mode), options);
  for (const TargetStatus& s : attached.statuses) {
    auto* probe = status.add_probes();
    probe->set_target(s.target);
    probe->set_attach_name(s.attach_name);
    probe->set_mode(s.mode);
    probe->set_attached(s.attached);
    probe->set_reason(s.reason);
  }
  if (attached.probes) {
    status.set_subcheck_method(subcheck_method_name(attached.plan.subchecks));
    status.set_subcheck_method_reason(attached.plan.subchecks_reason);
  }
  if (attached.sampler) status.set_sample_frequency_hz(options.sample_frequency);
  self->probes_ = std::move(attached.probes);
  self->sampler_ = std::move(attached.sampler);

  const Verdict verdict = judge(options.attach.mode, kernel.hardened, attached.outcome);
  if (!verdict.runs) return Error{verdict.summary, kExitCannotRun};
  spdlog::info("running: {}", verdict.summary);

  const std::string kallsyms_path = options.kallsyms_path;
  self->symbolizer_ = std::make_unique<KallsymsSymbolizer>(
      std::move(kernel.kallsyms), kernel.modules,
      [kallsyms_path] { return load_kallsyms(kallsyms_path); },
      [] { return read_file_text(kModulesPath); });
  self->debuginfo_ =
      KernelDebuginfo::find(debuginfo_settings(options, kernel.facts.release), false);
  log_debuginfo(self->debuginfo_->report());
  if (self->debuginfo_->ready() || self->debuginfo_->report().debuginfod_pending) {
    // Looked up beside the drains: a drain never waits for the debuginfo.
    self->sources_ = std::make_unique<SourceSymbolizer>(*self->symbolizer_, *self->debuginfo_,
                                                        SourceSymbolizer::Lookups::InTheBackground);
  } else {
    self->debuginfo_.reset();
  }
  self->builder_ = std::make_unique<IntervalBuilder>(CallsiteFolder(FoldingRules::defaults()));
  if (self->sampler_ || (self->probes_ && attached.plan.probe_workloads)) {
    const Result<std::string> root = find_unified_root();
    CgroupWorkloads::Options workloads;
    if (root.ok()) workloads.cgroup_root = root.value();
    self->workloads_ = std::make_unique<CgroupWorkloads>(std::move(workloads));
    if (!root.ok()) spdlog::warn("workloads: {}", root.error().text);
    if (root.ok()) self->follow_cgroups();
  }
  self->aggregator_ = std::make_unique<Aggregator>(options.top_k);
  self->prediction_ =
      std::make_unique<SpeedupPrediction>(options.prediction_window, self->sampler_ != nullptr,
                                          self->probes_ != nullptr && options.attach.latency);

  StackProfile header;
  header.sampling = self->sampler_ != nullptr;
  header.probes = self->probes_ != nullptr;
  header.latency = header.probes && options.attach.latency;
  header.sample_period_ns = cpu_clock_period_ns(status.sample_frequency_hz());
  header.kernel = kernel.facts.release;
  header.hucprof_version = hucprof_version();
  header.hardened_usercopy =
      std::string(kernel.hardened.enabled ? "on" : "off") + " (" + kernel.hardened.reason + ")";
  header.time_unix_ns = unix_now_ns();
  // Counting starts now, from zero: the first drain's samples are in the prediction's window and
  // in the web view's, as they are in the cumulative profile.
  const double started_at = monotonic_seconds(std::chrono::steady_clock::now());
  self->prediction_->start(started_at);
  self->profiles_ =
      std::make_unique<ProfileStore>(std::move(header), options.prediction_window, started_at);
  self->latest_ = status;
  return self;
}

void ProfilingPipeline::follow_cgroups() {
  CgroupNamesSession::Started names = CgroupNamesSession::start();
  if (!names.session) {
    spdlog::warn(
        "workloads: a cgroup that ends between two drains is named only if a walk of the tree "
        "found it while it ran, else [unknown]: {}",
        names.error);
    return;
  }
  cgroup_names_ = std::move(names.session);
  // After attaching: every cgroup is now either found by this walk or reported.
  workloads_->refresh();
}

void ProfilingPipeline::publish_to(std::function<void(const hucprof::v1::Snapshot&)> publish) {
  std::lock_guard lock(mutex_);
  publish_ = std::move(publish);
}

void ProfilingPipeline::set_top_k(uint32_t top_k) {
  std::lock_guard lock(mutex_);
  aggregator_->set_top_k(top_k);
}

void ProfilingPipeline::drain(bool end_interval, bool settle) {
  {
    DrainGate::Draining draining(gate_);  // before the lock: a waiting drain already counts
    std::lock_guard lock(mutex_);
    drain_locked(end_interval, settle);
  }
  // Give back what the drain's stacks and folds (and, the first time, libbpf's parse of the
  // kernel BTF at start-up) freed: glibc keeps freed heap pages otherwise, and the daemon's RSS
  // is what operators watch. Outside the lock: nothing waits for it.
  malloc_trim(0);
}

void ProfilingPipeline::drain_locked(bool end_interval, bool settle) {
  const auto started = std::chrono::steady_clock::now();
  RawDrain raw;
  // New counts go to a new generation; once no program writes the old one, it is read and
  // deleted (hucprof_abi.h), so the maps never fill up over a long run.
  if (probes_) probes_->retire_generation();
  if (sampler_) sampler_->retire_generation();
  if (probes_ || sampler_) barrier_->wait();
  // First: the sessions ask the kernel for their programs' run counts only while it counts.
  raw.program_costs.stats = read_bpf_stats_enabled();
  if (probes_) probes_->drain(raw);
  if (sampler_) sampler_->drain(raw);
  // After the samples: every cgroup they name was made (and reported) before them.
  if (cgroup_names_) {
    workloads_->apply(cgroup_names_->read());
    cgroup_names_->add_costs(raw);
    if (const uint64_t lost = cgroup_names_->lost(); lost > cgroup_events_lost_) {
      spdlog::warn(
          "workloads: {} cgroup changes found the ring buffer full; cgroups made and "
          "removed since the last drain may be [unknown]",
          lost - cgroup_events_lost_);
      cgroup_events_lost_ = lost;
    }
  }
  barrier_->add_map_memory(raw.map_memory);
  // Each moves the symbols' generation when what an address says changed, and the builder folds
  // again for it (Symbolizer::generation).
  if (symbolizer_->begin_interval()) {
    spdlog::info("kernel modules changed: kallsyms read again ({} text symbols)",
                 symbolizer_->index().size());
    if (sources_) sources_->modules_changed();
  }
  // Debuginfo that arrived (a download) changes how this drain symbolizes.
  if (sources_) sources_->begin_interval();
  Symbolizer& symbols = sources_ ? static_cast<Symbolizer&>(*sources_) : *symbolizer_;
  IntervalDeltas deltas = builder_->build(raw, symbols, workloads_.get());
  if (workloads_) workloads_->end_drain();
  if (sources_ && settle) {
    // What waits for its lines goes out now, with them if the lookups finish in time.
    if (!sources_->wait_answered(kSettleLimit)) {
      spdlog::warn("debuginfo lookups not done after {} s: some stacks go without their lines",
                   std::chrono::duration_cast<std::chrono::seconds>(kSettleLimit).count());
    }
    sources_->begin_interval();
    builder_->release_held(deltas, *sources_);
  }
  if (sources_) sources_->end_interval();
  aggregator_->apply(deltas);
  const int64_t now = unix_now_ns();
  const double at = monotonic_seconds(started);  // the same drain time for both windows
  profiles_->add(deltas, now, at);
  if (end_interval) {
    profiles_->close_interval(now);
    const ProfileStore::Size held = profiles_->size();
    spdlog::debug("profile store: {} entries, {} label sets, {} workloads named, {} folded",
                  held.samples, held.label_sets, held.named_workloads, held.folded_workloads);
  }
  hucprof::v1::Snapshot snapshot = status_;
  aggregator_->fill(snapshot);
  for (const MapMemory& m : raw.map_memory) {
    auto* map = snapshot.add_bpf_maps();
    map->set_map(m.map);
    map->set_bytes(m.bytes);
  }
  snapshot.set_kallsyms_reloads(symbolizer_->reloads());
  snapshot.set_debuginfo(sources_ && sources_->has_sources());
  snapshot.set_debuginfo_held_stacks(builder_->held());
  fill_program_costs(raw.program_costs, snapshot);
  snapshot.set_busy_cpu_ns(read_busy_cpu_ns().value_or(0));
  prediction_->update(at, aggregator_->cost_totals(), snapshot.busy_cpu_ns(), snapshot);
  snapshot.set_timestamp_unix_ms(now / 1000000);
  snapshot.set_last_drain_seconds(
      std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count());
  latest_ = std::move(snapshot);
  if (publish_) publish_(latest_);
}

hucprof::v1::Snapshot ProfilingPipeline::latest() const {
  std::lock_guard lock(mutex_);
  return latest_;
}

}  // namespace hucprof
