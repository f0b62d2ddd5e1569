#include "app/profiling_pipeline.h"

#include <malloc.h>

#include <chrono>

#include <spdlog/spdlog.h>

#include "app/attach_sessions.h"
#include "app/build_info.h"
#include "app/debuginfo_report.h"
#include "core/files/file_text.h"
#include "core/kernel/attach_plan.h"
#include "core/kernel/cpu_time.h"
#include "core/pipeline/drain_step.h"
#include "core/symbols/source_symbolizer.h"
#include "core/symbols/symbolizer.h"
#include "debuginfo/kernel_debuginfo.h"
#include "kernel_edge/cgroup_names_session.h"
#include "kernel_edge/kernel_drain_source.h"
#include "kernel_edge/probe_session.h"
#include "kernel_edge/program_barrier.h"
#include "kernel_edge/sampling_session.h"
#include "workload/cgroup_workloads.h"

namespace hucprof {

ProfilingPipeline::~ProfilingPipeline() = default;

Result<std::unique_ptr<ProfilingPipeline>> ProfilingPipeline::start(const RunOptions& options,
                                                                    KernelView& kernel) {
  std::unique_ptr<ProfilingPipeline> self(new ProfilingPipeline());
  hucprof::v1::Snapshot status;
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
  if (self->sampler_ || (self->probes_ && attached.plan.probe_workloads)) {
    const Result<std::string> root = find_unified_root();
    CgroupWorkloads::Options workloads;
    if (root.ok()) workloads.cgroup_root = root.value();
    self->workloads_ = std::make_unique<CgroupWorkloads>(std::move(workloads));
    if (!root.ok()) spdlog::warn("workloads: {}", root.error().text);
    if (root.ok()) self->follow_cgroups();
  }
  self->source_ = std::make_unique<KernelDrainSource>(self->probes_.get(), self->sampler_.get(),
                                                      *self->barrier_, self->workloads_.get(),
                                                      self->cgroup_names_.get());

  DrainStep::Config config;
  config.top_k = options.top_k;
  config.prediction_window = options.prediction_window;
  StackProfile& header = config.header;
  header.sampling = self->sampler_ != nullptr;
  header.probes = self->probes_ != nullptr;
  header.latency = header.probes && options.attach.latency;
  header.sample_period_ns = cpu_clock_period_ns(status.sample_frequency_hz());
  header.kernel = kernel.facts.release;
  header.hucprof_version = hucprof_version();
  header.hardened_usercopy =
      std::string(kernel.hardened.enabled ? "on" : "off") + " (" + kernel.hardened.reason + ")";
  header.time_unix_ns = unix_now_ns();
  // Counting starts now, from zero.
  config.started_at = monotonic_seconds(std::chrono::steady_clock::now());
  self->latest_ = status;
  config.status = std::move(status);
  self->step_ =
      std::make_unique<DrainStep>(std::move(config), *self->symbolizer_, self->sources_.get());
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
  step_->set_top_k(top_k);
}

ProfileStore& ProfilingPipeline::profiles() { return step_->profiles(); }

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
  DrainStep::Notes notes;
  latest_ = step_->run(*source_, end_interval, settle, notes);
  if (notes.kallsyms_reloaded) {
    spdlog::info("kernel modules changed: kallsyms read again ({} text symbols)",
                 *notes.kallsyms_reloaded);
  }
  if (notes.lookups_late) {
    spdlog::warn("debuginfo lookups not done after {} s: some stacks go without their lines",
                 std::chrono::duration_cast<std::chrono::seconds>(DrainStep::kSettleLimit).count());
  }
  if (end_interval) {
    const ProfileStore::Size held = step_->profiles().size();
    spdlog::debug("profile store: {} entries, {} label sets, {} workloads named, {} folded",
                  held.samples, held.label_sets, held.named_workloads, held.folded_workloads);
  }
  if (publish_) publish_(latest_);
}

hucprof::v1::Snapshot ProfilingPipeline::latest() const {
  std::lock_guard lock(mutex_);
  return latest_;
}

}  // namespace hucprof
