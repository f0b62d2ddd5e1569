#include "app/run_command.h"

#include <malloc.h>
#include <systemd/sd-daemon.h>

#include <algorithm>
#include <chrono>
#include <memory>

#include <bpf/libbpf.h>
#include <spdlog/spdlog.h>

#include "app/attach_sessions.h"
#include "app/kernel_view.h"
#include "app/privileges.h"
#include "app/signal_inbox.h"
#include "bpf/program_barrier.h"
#include "core/aggregator.h"
#include "core/attach_plan.h"
#include "core/callsite_folder.h"
#include "core/file_text.h"
#include "core/interval_builder.h"
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

// The daemon's pieces, in the order the data flows.
struct Pipeline {
  std::unique_ptr<ProbeSession> probes;
  std::unique_ptr<SamplingSession> sampler;
  std::unique_ptr<ProgramBarrier> barrier;
  std::unique_ptr<KallsymsSymbolizer> symbolizer;
  std::unique_ptr<IntervalBuilder> builder;
  std::unique_ptr<Aggregator> aggregator;
  std::unique_ptr<SpeedupPrediction> prediction;
  hucprof::v1::Snapshot status;  // probes, build, hardened: fixed after start-up
};

hucprof::v1::Snapshot drain_once(Pipeline& p) {
  auto started = Clock::now();
  RawDrain raw;
  // New counts go to a new generation; once no program writes the old one, it is read and
  // deleted (hucprof_abi.h), so the maps never fill up over a long run.
  if (p.probes) p.probes->retire_generation();
  if (p.sampler) p.sampler->retire_generation();
  if (p.probes || p.sampler) p.barrier->wait();
  if (p.probes) p.probes->drain(raw);
  if (p.sampler) p.sampler->drain(raw);
  p.barrier->add_map_memory(raw.map_memory);
  if (p.symbolizer->begin_interval()) {
    spdlog::info("kernel modules changed: kallsyms read again ({} text symbols)",
                 p.symbolizer->index().size());
    p.builder->invalidate_folds();
  }
  p.aggregator->apply(p.builder->build(raw, *p.symbolizer));
  hucprof::v1::Snapshot snapshot = p.status;
  p.aggregator->fill(snapshot);
  for (const MapMemory& m : raw.map_memory) {
    auto* map = snapshot.add_bpf_maps();
    map->set_map(m.map);
    map->set_bytes(m.bytes);
  }
  snapshot.set_kallsyms_reloads(p.symbolizer->reloads());
  snapshot.set_busy_cpu_ns(read_busy_cpu_ns().value_or(0));
  p.prediction->update(std::chrono::duration<double>(started.time_since_epoch()).count(), snapshot);
  snapshot.set_timestamp_unix_ms(std::chrono::duration_cast<std::chrono::milliseconds>(
                                     std::chrono::system_clock::now().time_since_epoch())
                                     .count());
  snapshot.set_last_drain_seconds(std::chrono::duration<double>(Clock::now() - started).count());
  // Give back what the drain's stacks and folds (and, the first time, libbpf's parse of the
  // kernel BTF at start-up) freed: glibc keeps freed heap pages otherwise, and the daemon's RSS
  // is what operators watch.
  malloc_trim(0);
  return snapshot;
}

}  // namespace

int run_command(const RunOptions& started_with, const SettingsSource& source) {
  SignalInbox signals;                // before any thread starts
  RunOptions options = started_with;  // SIGHUP may change the live settings

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

  // Bind the port and load the web config before loading anything into the kernel: a taken
  // port or a bad file is a usage error the user fixes by flag, and should not cost an
  // attach/detach cycle. Serving (threads) starts only after the privilege drop below.
  auto collectable = std::make_shared<SnapshotCollectable>();
  auto server_or_error =
      MetricsServer::bind({options.listen_address, options.web_config_file}, collectable);
  if (auto* error = std::get_if<WebStartError>(&server_or_error)) {
    spdlog::error("{}", error->message);
    return error->exit_code;
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

  const AttachPlan plan = plan_attach(kernel, attach_options(options));
  p.barrier = std::make_unique<ProgramBarrier>();
  if (!p.barrier->error().empty()) {
    spdlog::warn("drains wait by sleeping between generations: {}", p.barrier->error());
  }
  AttachedSessions attached = attach_sessions(plan, options);
  for (const auto& s : attached.statuses) *p.status.add_probes() = s;
  if (attached.sampler) p.status.set_sample_frequency_hz(options.sample_frequency);
  p.probes = std::move(attached.probes);
  p.sampler = std::move(attached.sampler);

  const Verdict verdict = judge(options.mode, kernel.hardened, attached.outcome);
  if (!verdict.runs) {
    spdlog::error("{}", verdict.summary);
    return 1;
  }
  spdlog::info("running: {}", verdict.summary);

  const std::string kallsyms_path = options.kallsyms_path;
  p.symbolizer = std::make_unique<KallsymsSymbolizer>(
      std::move(kernel.kallsyms), kernel.modules,
      [kallsyms_path] { return load_kallsyms(kallsyms_path); },
      [] { return read_file_text(kModulesPath); });
  p.builder = std::make_unique<IntervalBuilder>(CallsiteFolder(rules));
  p.aggregator = std::make_unique<Aggregator>(options.top_k);
  p.prediction = std::make_unique<SpeedupPrediction>(
      options.prediction_window, p.sampler != nullptr, p.probes != nullptr && options.latency);

  // Everything is attached: give up what draining and serving do not need, while hucprof is
  // still single-threaded (capabilities are per thread, so the web server's threads start after
  // this; its socket is already bound).
  if (!drop_to_least_privilege(options)) return 1;
  server->serve();

  collectable->update(drain_once(p));
  spdlog::info("serving metrics on {}://{}/metrics, draining every {} ms",
               server->tls() ? "https" : "http", server->bound_address(), options.interval.count());
  sd_notifyf(0, "READY=1\nSTATUS=probes %s, sampling %s", p.probes ? "on" : "off",
             p.sampler ? "on" : "off");

  // Wake for whichever comes first: the next drain, the next watchdog ping or a signal.
  uint64_t watchdog_usec = 0;
  if (sd_watchdog_enabled(0, &watchdog_usec) <= 0) watchdog_usec = 0;
  const auto tick = [&] {
    return watchdog_usec
               ? std::min(options.interval, std::chrono::duration_cast<std::chrono::milliseconds>(
                                                std::chrono::microseconds(watchdog_usec / 2)))
               : options.interval;
  };
  auto next_drain = Clock::now() + options.interval;
  ReceivedSignal stop;
  while (true) {
    auto wait =
        std::clamp(std::chrono::duration_cast<std::chrono::milliseconds>(next_drain - Clock::now()),
                   std::chrono::milliseconds(0), tick());
    if (const auto received = signals.wait_for(wait)) {
      if (received->action == SignalAction::Stop) {
        stop = *received;
        break;
      }
      if (received->action == SignalAction::Reload) {
        const RunOptions before = options;
        options = reload_settings(options, source);
        if (options.top_k != before.top_k) p.aggregator->set_top_k(options.top_k);
        // A shorter interval counts from now, not from the last drain's schedule.
        next_drain = std::min(next_drain, Clock::now() + options.interval);
      } else {
        spdlog::warn(
            "received {}: ignored (SIGTERM or SIGINT stops hucprof, SIGHUP re-reads "
            "the settings)",
            received->name);
      }
    }
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
  spdlog::info("received {}, detaching", stop.name);
  return 0;
}

}  // namespace hucprof
