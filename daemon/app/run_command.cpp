#include "app/run_command.h"

#include <systemd/sd-daemon.h>

#include <algorithm>
#include <chrono>
#include <csignal>
#include <memory>

#include <bpf/libbpf.h>
#include <spdlog/spdlog.h>

#include "app/kernel_view.h"
#include "app/profiling_pipeline.h"
#include "app/stop_signal.h"
#include "export/metrics_server.h"
#include "export/pprof_handler.h"
#include "export/web_view.h"

#ifndef HUCPROF_VERSION
#define HUCPROF_VERSION "dev"
#endif

namespace hucprof {

namespace {

using Clock = std::chrono::steady_clock;

// The outputs beside /metrics, fed by the same pipeline.
void add_profile_routes(MetricsServer& server, ProfilingPipeline& pipeline,
                        const RunOptions& options) {
  ProfileSource source;
  source.cumulative = [&pipeline] { return pipeline.profiles().cumulative(); };
  source.drain_now = [&pipeline] { pipeline.drain(false); };
  source.pause = [&pipeline] { pipeline.wait_while_draining(); };
  server.add_route("/debug/pprof/usercopy", make_pprof_handler(std::move(source)));
  const std::string mode = mode_name(options.mode);
  const auto interval = options.interval;
  server.add_route(
      "/", make_web_view_handler([&pipeline, mode, interval] {
        pipeline.wait_while_draining();  // rendering steps aside for a drain, as profiles do
        return WebViewInput{pipeline.latest(), pipeline.profiles().last_interval(), mode, interval};
      }));
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

  auto started = ProfilingPipeline::start(options, kernel);
  if (!started.pipeline) {
    spdlog::error("{}", started.error);
    return 1;
  }
  ProfilingPipeline& pipeline = *started.pipeline;

  pipeline.publish_to([collectable](const hucprof::v1::Snapshot& s) { collectable->update(s); });
  pipeline.drain(true);
  add_profile_routes(*server, pipeline, options);
  spdlog::info("serving metrics on {} (port {}), draining every {} ms", options.listen_address,
               server->port(), options.interval.count());
  sd_notifyf(0, "READY=1\nSTATUS=probes %s, sampling %s", pipeline.probes_on() ? "on" : "off",
             pipeline.sampling_on() ? "on" : "off");

  // Wake for whichever comes first: the next drain or the next watchdog ping.
  uint64_t watchdog_usec = 0;
  auto tick = options.interval;
  if (sd_watchdog_enabled(0, &watchdog_usec) > 0 && watchdog_usec > 0) {
    tick = std::min(tick, std::chrono::duration_cast<std::chrono::milliseconds>(
                              std::chrono::microseconds(watchdog_usec / 2)));
  }
  auto next_drain = Clock::now() + options.interval;
  while (true) {
    auto wait =
        std::clamp(std::chrono::duration_cast<std::chrono::milliseconds>(next_drain - Clock::now()),
                   std::chrono::milliseconds(0), tick);
    if (stop.wait_for(wait)) break;
    // Ping before draining: the watchdog asks "is the loop alive", and a drain on a loaded
    // machine must not eat the margin.
    if (watchdog_usec) sd_notify(0, "WATCHDOG=1");
    if (Clock::now() >= next_drain) {
      pipeline.drain(true);
      next_drain += options.interval;
      if (next_drain < Clock::now()) next_drain = Clock::now() + options.interval;
    }
  }
  sd_notify(0, "STOPPING=1");
  spdlog::info("received {}, detaching", strsignal(stop.last_signal()));
  // The server goes first: its handlers use the pipeline.
  server.reset();
  return 0;
}

}  // namespace hucprof
