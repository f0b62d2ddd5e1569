#include "app/profiling_pipeline.h"

#include <chrono>

#include <bpf/libbpf.h>
#include <spdlog/spdlog.h>

#include "bpf/probe_session.h"
#include "bpf/sampling_session.h"
#include "core/address_ranges.h"
#include "core/aggregator.h"
#include "core/callsite_folder.h"
#include "core/cpu_time.h"
#include "core/interval_builder.h"
#include "core/probe_targets.h"
#include "core/symbolizer.h"

#ifndef HUCPROF_VERSION
#define HUCPROF_VERSION "dev"
#endif

namespace hucprof {

namespace {

using Clock = std::chrono::steady_clock;
constexpr const char* kSamplerTarget = "cpu-clock";

AttachPolicy to_policy(ProbeAttach attach) {
  switch (attach) {
    case ProbeAttach::Fentry:
      return AttachPolicy::Fentry;
    case ProbeAttach::Kprobe:
      return AttachPolicy::Kprobe;
    case ProbeAttach::Auto:
      break;
  }
  return AttachPolicy::Auto;
}

void log_status(const hucprof::v1::ProbeStatus& s) {
  if (s.attached()) {
    spdlog::info("probe {}: attached as {} ({})", s.target(), s.mode(),
                 s.attach_name().empty() ? s.target() : s.attach_name());
  } else {
    spdlog::warn("probe {}: unavailable: {}", s.target(), s.reason());
  }
}

}  // namespace

int64_t unix_now_ns() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

ProfilingPipeline::~ProfilingPipeline() = default;

ProfilingPipeline::Started ProfilingPipeline::start(const RunOptions& options, KernelView& kernel) {
  Started out;
  std::unique_ptr<ProfilingPipeline> self(new ProfilingPipeline());
  hucprof::v1::Snapshot& status = self->status_;
  const FoldingRules rules = FoldingRules::defaults();
  status.set_hardened_usercopy_enabled(kernel.hardened.enabled);
  status.set_hardened_usercopy_reason(kernel.hardened.reason);
  auto* build = status.mutable_build();
  build->set_version(HUCPROF_VERSION);
  build->set_libbpf(std::to_string(libbpf_major_version()) + "." +
                    std::to_string(libbpf_minor_version()));
  build->set_kernel(kernel.facts.release);

  std::string probe_failure, sample_failure;
  // With the checks off (hardened_usercopy=off), __check_object_size is still called and
  // returns at once: probing it would count checks that do not happen.
  const bool probes_pointless = !kernel.hardened.enabled;
  // Targets not tried are still exported (mode="none"), so dashboards list every target.
  auto report_not_tried = [&](const std::string& reason) {
    spdlog::info("probes: {}", reason);
    for (const ProbeTarget& target : probe_targets()) {
      hucprof::v1::ProbeStatus s;
      s.set_target(std::string(target.symbol));
      s.set_reason(reason);
      *status.add_probes() = s;
    }
  };
  if (options.mode == Mode::Sample) {
    report_not_tried("not tried: --mode sample");
  } else if (probes_pointless) {
    report_not_tried("not attached: the hardened usercopy checks are off on this kernel (" +
                     kernel.hardened.reason + ")");
  } else {
    ProbeConfig config;
    config.policy = to_policy(options.probe_attach);
    config.latency = options.latency;
    for (const auto& helper : rules.copy_helpers) config.helper_symbols.push_back(helper);
    auto started = ProbeSession::start(config, kernel.kallsyms, kernel.facts);
    for (const auto& s : started.statuses) {
      log_status(s);
      *status.add_probes() = s;
    }
    self->probes_ = std::move(started.session);
    if (!self->probes_) {
      probe_failure = !started.error.empty() ? started.error
                      : started.statuses.empty()
                          ? "no probe target"
                          : "__check_object_size: " + started.statuses.front().reason();
    }
  }
  if (options.mode != Mode::Probe) {
    auto ranges = build_address_ranges(kernel.kallsyms, dispatcher_symbols());
    auto started = SamplingSession::start(options.sample_frequency, ranges);
    hucprof::v1::ProbeStatus s;
    s.set_target(kSamplerTarget);
    s.set_attach_name("perf_event cpu-clock");
    s.set_mode("perf_event");
    s.set_attached(started.session != nullptr);
    s.set_reason(started.error);
    if (started.session) {
      spdlog::info("sampler: perf_event cpu-clock at {} Hz on {} CPUs", options.sample_frequency,
                   started.cpus);
      status.set_sample_frequency_hz(options.sample_frequency);
    } else {
      spdlog::warn("sampler: unavailable: {}", started.error);
      sample_failure = started.error;
    }
    *status.add_probes() = s;
    self->sampler_ = std::move(started.session);
  }

  if (options.mode == Mode::Probe && !self->probes_ && !probes_pointless) {
    out.error = "--mode probe: no probe could attach: " + probe_failure;
    return out;
  }
  if (options.mode == Mode::Sample && !self->sampler_) {
    out.error = "--mode sample: sampling unavailable: " + sample_failure;
    return out;
  }
  if (!self->probes_ && !self->sampler_ && !probes_pointless) {
    out.error = "--mode auto: neither probes (" + probe_failure + ") nor sampling (" +
                sample_failure + ") are available";
    return out;
  }

  const std::string kallsyms_path = options.kallsyms_path;
  self->symbolizer_ = std::make_unique<KallsymsSymbolizer>(
      std::move(kernel.kallsyms), [kallsyms_path] { return load_kallsyms(kallsyms_path); });
  self->builder_ = std::make_unique<IntervalBuilder>(CallsiteFolder(rules));
  self->aggregator_ = std::make_unique<Aggregator>(options.top_k);

  StackProfile header;
  header.sampling = self->sampler_ != nullptr;
  header.probes = self->probes_ != nullptr;
  header.latency = header.probes && options.latency;
  header.sample_period_ns = cpu_clock_period_ns(status.sample_frequency_hz());
  header.kernel = kernel.facts.release;
  header.hucprof_version = HUCPROF_VERSION;
  header.hardened_usercopy =
      std::string(kernel.hardened.enabled ? "on" : "off") + " (" + kernel.hardened.reason + ")";
  header.time_unix_ns = unix_now_ns();
  self->profiles_ = std::make_unique<ProfileStore>(std::move(header));
  self->latest_ = status;
  out.pipeline = std::move(self);
  return out;
}

void ProfilingPipeline::publish_to(std::function<void(const hucprof::v1::Snapshot&)> publish) {
  std::lock_guard lock(mutex_);
  publish_ = std::move(publish);
}

void ProfilingPipeline::drain(bool end_interval) {
  DrainGate::Draining draining(gate_);  // before the lock: a waiting drain already counts
  std::lock_guard lock(mutex_);
  auto started = Clock::now();
  RawDrain raw;
  if (probes_) probes_->drain(raw);
  if (sampler_) sampler_->drain(raw);
  if (symbolizer_->begin_interval()) builder_->invalidate_folds();
  const IntervalDeltas deltas = builder_->build(raw, *symbolizer_);
  aggregator_->apply(deltas);
  const int64_t now = unix_now_ns();
  profiles_->add(deltas, now);
  if (end_interval) profiles_->close_interval(now);
  hucprof::v1::Snapshot snapshot = status_;
  aggregator_->fill(snapshot);
  snapshot.set_timestamp_unix_ms(now / 1000000);
  snapshot.set_last_drain_seconds(std::chrono::duration<double>(Clock::now() - started).count());
  latest_ = snapshot;
  if (publish_) publish_(latest_);
}

hucprof::v1::Snapshot ProfilingPipeline::latest() const {
  std::lock_guard lock(mutex_);
  return latest_;
}

}  // namespace hucprof
