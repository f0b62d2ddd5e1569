#include "app/run_command.h"

#include <systemd/sd-daemon.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <memory>

#include <spdlog/spdlog.h>

#include "app/build_info.h"
#include "app/command_error.h"
#include "app/kernel_view.h"
#include "app/privileges.h"
#include "app/profiling_pipeline.h"
#include "app/signal_inbox.h"
#include "app/systemd_sockets.h"
#include "core/profile/shown_windows.h"
#include "export/views/pprof_handler.h"
#include "export/views/web_view.h"
#include "web/metrics_server.h"

namespace hucprof {

namespace {

using Clock = std::chrono::steady_clock;

// The outputs beside /metrics, fed by the same pipeline. `interval_ms` is the live --interval
// (SIGHUP may change it), which the web view reports.
void add_profile_routes(MetricsServer& server, ProfilingPipeline& pipeline,
                        const RunOptions& options, const std::atomic<int64_t>& interval_ms) {
  // The windows pages showed, for their links to the profile of exactly that window.
  auto shown = std::make_shared<ShownWindows>();
  ProfileSource source;
  source.cumulative = [&pipeline] { return pipeline.profiles().cumulative(); };
  source.window = [&pipeline] { return pipeline.profiles().window(); };
  source.shown_window = [shown](int64_t end) { return shown->find(end); };
  source.drain_now = [&pipeline] { pipeline.drain(false); };
  source.pause = [&pipeline] { pipeline.wait_while_draining(); };
  server.add_route("/debug/pprof/usercopy", make_pprof_handler(std::move(source)));
  server.add_route("/", make_web_view_handler([&pipeline, shown,
                                               mode = std::string(mode_name(options.attach.mode)),
                                               window = options.prediction_window, &interval_ms,
                                               telemetry_path = options.telemetry_path] {
                     pipeline.wait_while_draining();  // rendering steps aside for a drain
                     WebViewInput in{pipeline.latest(),
                                     pipeline.profiles().window(),
                                     mode,
                                     std::chrono::milliseconds(interval_ms.load()),
                                     window,
                                     true,
                                     telemetry_path};
                     shown->remember(in.window);
                     return in;
                   }));
}

}  // namespace

int run_command(const RunOptions& started_with, const SettingsSource& source) {
  SignalInbox signals;                // before any thread starts
  RunOptions options = started_with;  // SIGHUP may change the live settings

  auto loaded = load_kernel_view(options.kallsyms_path);
  if (!loaded.ok()) return log_and_exit_code(loaded.error());
  KernelView& kernel = loaded.value();
  // Bind the port and load the web config before loading anything into the kernel: a taken
  // port or a bad file is a usage error the user fixes by flag, and should not cost an
  // attach/detach cycle. Serving (threads) starts only after the privilege drop below.
  WebOptions web{options.listen_addresses, options.web_config_file, options.telemetry_path, {}};
  if (options.systemd_socket) {
    auto sockets = systemd_listen_sockets();
    if (!sockets.ok()) {
      return log_and_exit_code(
          Error{"--web.systemd-socket: " + sockets.error().text, sockets.error().exit_code});
    }
    web.listen_fds = sockets.value();
  }
  auto collectable = std::make_shared<SnapshotCollectable>();
  auto bound = MetricsServer::bind(web, collectable);
  if (!bound.ok()) return log_and_exit_code(bound.error());
  std::unique_ptr<MetricsServer> server = std::move(bound).value();
  // After the web config loaded: a usage error is the one line on stderr.
  spdlog::info("hucprof {} on kernel {}, mode {}, libbpf {}", hucprof_version(),
               kernel.facts.release, mode_name(options.attach.mode), libbpf_version());
  spdlog::info("hardened usercopy: {} ({})", kernel.hardened.enabled ? "on" : "off",
               kernel.hardened.reason);
  if (!kernel.hardened.enabled) {
    spdlog::warn("the usercopy checks do not run on this kernel: every count will stay 0");
  }

  auto started = ProfilingPipeline::start(options, kernel);
  if (!started.ok()) return log_and_exit_code(started.error());
  ProfilingPipeline& pipeline = *started.value();
  pipeline.publish_to([collectable](const hucprof::v1::Snapshot& s) { collectable->update(s); });
  std::atomic<int64_t> interval_ms = options.interval.count();
  // Registered before serving, so the first request already finds them; until the first drain
  // they show an empty profile.
  add_profile_routes(*server, pipeline, options, interval_ms);

  // Everything is attached: give up what draining and serving do not need, while hucprof is
  // still single-threaded (capabilities are per thread, so the web server's threads start after
  // this; its socket is already bound). Profile requests drain on those threads: they need no
  // more than the drain loop does.
  if (!drop_to_least_privilege(options)) return 1;
  server->serve();

  pipeline.drain(true);
  server->set_ready();  // programs loaded, first drain done: /-/ready says so from now on
  for (const std::string& address : server->bound_addresses()) {
    spdlog::info("serving metrics on {}://{}{}, draining every {} ms",
                 server->tls() ? "https" : "http", address, options.telemetry_path,
                 options.interval.count());
  }
  sd_notifyf(0, "READY=1\nSTATUS=probes %s, sampling %s", pipeline.probes_on() ? "on" : "off",
             pipeline.sampling_on() ? "on" : "off");

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
        if (options.top_k != before.top_k) pipeline.set_top_k(options.top_k);
        interval_ms = options.interval.count();
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
      pipeline.drain(true);
      next_drain += options.interval;
      if (next_drain < Clock::now()) next_drain = Clock::now() + options.interval;
    }
  }
  sd_notify(0, "STOPPING=1");
  spdlog::info("received {}, detaching", stop.name);
  // The server goes first: its handlers use the pipeline (and interval_ms).
  server.reset();
  return 0;
}

}  // namespace hucprof
