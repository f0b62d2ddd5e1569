#include "app/run_command.h"

#include <systemd/sd-daemon.h>

#include <algorithm>
#include <chrono>
#include <csignal>
#include <memory>

#include <bpf/libbpf.h>
#include <spdlog/spdlog.h>

#include "app/kernel_view.h"
#include "app/stop_signal.h"
#include "bpf/probe_session.h"
#include "bpf/sampling_session.h"
#include "core/address_ranges.h"
#include "core/aggregator.h"
#include "core/callsite_folder.h"
#include "core/interval_builder.h"
#include "core/probe_targets.h"
#include "core/proc_stat.h"
#include "core/speedup_prediction.h"
#include "core/symbolizer.h"
#include "export/metrics_server.h"

#ifndef HUCPROF_VERSION
#define HUCPROF_VERSION "dev"
#endif

namespace hucprof {

namespace {

using Clock = std::chrono::steady_clock;
constexpr const char* kSamplerTarget = "cpu-clock";

AttachPolicy to_policy(ProbeAttach attach) {
  switch (attach) {
    case ProbeAttach::Fentry: return AttachPolicy::Fentry;
    case ProbeAttach::Kprobe: return AttachPolicy::Kprobe;
    case ProbeAttach::Auto: break;
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

// The daemon's pieces, in the order the data flows.
struct Pipeline {
  std::unique_ptr<ProbeSession> probes;
  std::unique_ptr<SamplingSession> sampler;
  std::unique_ptr<KallsymsSymbolizer> symbolizer;
  std::unique_ptr<IntervalBuilder> builder;
  std::unique_ptr<Aggregator> aggregator;
  std::unique_ptr<SpeedupPrediction> prediction;
  hucprof::v1::Snapshot status;  // probes, build, hardened: fixed after start-up
};

hucprof::v1::Snapshot drain_once(Pipeline& p) {
  auto started = Clock::now();
  RawDrain raw;
  if (p.probes) p.probes->drain(raw);
  if (p.sampler) p.sampler->drain(raw);
  if (p.symbolizer->begin_interval()) p.builder->invalidate_folds();
  p.aggregator->apply(p.builder->build(raw, *p.symbolizer));
  hucprof::v1::Snapshot snapshot = p.status;
  p.aggregator->fill(snapshot);
  snapshot.set_busy_cpu_ns(read_busy_cpu_ns().value_or(0));
  p.prediction->update(std::chrono::duration<double>(started.time_since_epoch()).count(), snapshot);
  snapshot.set_timestamp_unix_ms(std::chrono::duration_cast<std::chrono::milliseconds>(
                                     std::chrono::system_clock::now().time_since_epoch())
                                     .count());
  snapshot.set_last_drain_seconds(
      std::chrono::duration<double>(Clock::now() - started).count());
  return snapshot;
}

}  // namespace

int run_command(const RunOptions& options) {
  StopSignal stop;  // before any thread starts

  auto loaded = load_kernel_view(options.kallsyms_path);
  if (auto* error = std::get_if<std::string>(&loaded)) {
    spdlog::error("{}", *error);
    return 1;
  }
  KernelView& kernel = std::get<KernelView>(loaded);
  spdlog::info("hucprof {} on kernel {}, mode {}, libbpf {}.{}", HUCPROF_VERSION,
               kernel.facts.release, mode_name(options.mode), libbpf_major_version(),
               libbpf_minor_version());
  spdlog::info("hardened usercopy: {} ({})", kernel.hardened.enabled ? "on" : "off",
               kernel.hardened.reason);
  if (!kernel.hardened.enabled) {
    spdlog::warn("the usercopy checks do not run on this kernel: every count will stay 0");
  }

  // Bind the port before loading anything into the kernel: a taken port is a usage error
  // the user fixes by flag, and should not cost an attach/detach cycle.
  auto collectable = std::make_shared<SnapshotCollectable>();
  auto server_or_error = MetricsServer::start(options.listen_address, collectable);
  if (auto* error = std::get_if<std::string>(&server_or_error)) {
    spdlog::error("{}", *error);
    return 1;
  }
  auto server = std::move(std::get<std::unique_ptr<MetricsServer>>(server_or_error));

  Pipeline p;
  const FoldingRules rules = FoldingRules::defaults();
  p.status.set_hardened_usercopy_enabled(kernel.hardened.enabled);
  p.status.set_hardened_usercopy_reason(kernel.hardened.reason);
  auto* build = p.status.mutable_build();
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
      *p.status.add_probes() = s;
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
      *p.status.add_probes() = s;
    }
    p.probes = std::move(started.session);
    if (!p.probes) {
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
      p.status.set_sample_frequency_hz(options.sample_frequency);
    } else {
      spdlog::warn("sampler: unavailable: {}", started.error);
      sample_failure = started.error;
    }
    *p.status.add_probes() = s;
    p.sampler = std::move(started.session);
  }

  if (options.mode == Mode::Probe && !p.probes && !probes_pointless) {
    spdlog::error("--mode probe: no probe could attach: {}", probe_failure);
    return 1;
  }
  if (options.mode == Mode::Sample && !p.sampler) {
    spdlog::error("--mode sample: sampling unavailable: {}", sample_failure);
    return 1;
  }
  if (!p.probes && !p.sampler && !probes_pointless) {
    spdlog::error("--mode auto: neither probes ({}) nor sampling ({}) are available",
                  probe_failure, sample_failure);
    return 1;
  }

  const std::string kallsyms_path = options.kallsyms_path;
  p.symbolizer = std::make_unique<KallsymsSymbolizer>(
      std::move(kernel.kallsyms), [kallsyms_path] { return load_kallsyms(kallsyms_path); });
  p.builder = std::make_unique<IntervalBuilder>(CallsiteFolder(rules));
  p.aggregator = std::make_unique<Aggregator>(options.top_k);
  p.prediction = std::make_unique<SpeedupPrediction>(
      options.prediction_window, p.sampler != nullptr, p.probes != nullptr && options.latency);

  collectable->update(drain_once(p));
  spdlog::info("serving metrics on {} (port {}), draining every {} ms", options.listen_address,
               server->port(), options.interval.count());
  sd_notifyf(0, "READY=1\nSTATUS=probes %s, sampling %s", p.probes ? "on" : "off",
             p.sampler ? "on" : "off");

  // Wake for whichever comes first: the next drain or the next watchdog ping.
  uint64_t watchdog_usec = 0;
  auto tick = options.interval;
  if (sd_watchdog_enabled(0, &watchdog_usec) > 0 && watchdog_usec > 0) {
    tick = std::min(tick, std::chrono::duration_cast<std::chrono::milliseconds>(
                              std::chrono::microseconds(watchdog_usec / 2)));
  }
  auto next_drain = Clock::now() + options.interval;
  while (true) {
    auto wait = std::clamp(std::chrono::duration_cast<std::chrono::milliseconds>(
                               next_drain - Clock::now()),
                           std::chrono::milliseconds(0), tick);
    if (stop.wait_for(wait)) break;
    // Ping before draining: the watchdog asks "is the loop alive", and a drain on a loaded
    // machine must not eat the margin.
    if (watchdog_usec) sd_notify(0, "WATCHDOG=1");
    if (Clock::now() >= next_drain) {
      collectable->update(drain_once(p));
      next_drain += options.interval;
      if (next_drain < Clock::now()) next_drain = Clock::now() + options.interval;
    }
  }
  sd_notify(0, "STOPPING=1");
  spdlog::info("received {}, detaching", strsignal(stop.last_signal()));
  return 0;
}

}  // namespace hucprof
