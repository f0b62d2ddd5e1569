// huc_web_serve: hucprof's web front (MetricsServer: /metrics, "/", --web.config.file) with a
// fixed snapshot and no BPF, so the HTTP, TLS and authentication behaviour is tested and
// benchmarked without root. Prints "listening on ADDRESS" once serving; SIGTERM/SIGINT stop it
// (exit 0). Start errors: the message on stderr and the exit code `hucprof run` would use.
//
//   huc_web_serve --web.listen-address 127.0.0.1:0 [--web.config.file web.yml]
//                 [--slow-route] (adds /slow: waits for ?seconds=N, polling cancelled())
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <thread>

#include <spdlog/sinks/stdout_sinks.h>
#include <spdlog/spdlog.h>

#include "web/metrics_server.h"

namespace {

hucprof::v1::Snapshot fixed_snapshot() {
  hucprof::v1::Snapshot snapshot;
  auto* c = snapshot.add_checks();
  c->set_callsite("udp_recvmsg");
  c->set_syscall("recvfrom");
  c->set_direction("to_user");
  c->set_calls(7);
  c->set_bytes(7168);
  return snapshot;
}

hucprof::HttpResponse slow_page(const hucprof::HttpRequest& request) {
  const auto seconds = request.query.find("seconds");
  const int wait = seconds == request.query.end() ? 1 : std::atoi(seconds->second.c_str());
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(wait);
  hucprof::HttpResponse response;
  while (std::chrono::steady_clock::now() < deadline) {
    if (request.cancelled()) {
      std::fprintf(stderr, "slow: cancelled\n");
      response.body = "cancelled\n";
      return response;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  response.body = "waited\n";
  return response;
}

}  // namespace

int main(int argc, char** argv) {
  hucprof::WebOptions options;
  bool slow_route = false;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    if (arg == "--web.listen-address" && i + 1 < argc) {
      options.listen_addresses.emplace_back(argv[++i]);  // repeatable, as in hucprof run
    } else if (arg == "--web.config.file" && i + 1 < argc) {
      options.web_config_file = argv[++i];
    } else if (arg == "--slow-route") {
      slow_route = true;
    } else {
      std::fprintf(stderr,
                   "usage: %s --web.listen-address ADDR [--web.config.file FILE] [--slow-route]\n",
                   argv[0]);
      return 2;
    }
  }
  if (options.listen_addresses.empty()) options.listen_addresses.emplace_back("127.0.0.1:0");
  spdlog::set_default_logger(spdlog::stderr_logger_mt("stderr"));
  // Stop signals are waited for below; block them before any server thread starts.
  sigset_t stop;
  sigemptyset(&stop);
  sigaddset(&stop, SIGTERM);
  sigaddset(&stop, SIGINT);
  pthread_sigmask(SIG_BLOCK, &stop, nullptr);

  auto collectable = std::make_shared<hucprof::SnapshotCollectable>();
  collectable->update(fixed_snapshot());
  auto started = hucprof::MetricsServer::start(options, collectable);
  if (!started.ok()) {
    std::fprintf(stderr, "%s\n", started.error().text.c_str());
    return started.error().exit_code;
  }
  std::unique_ptr<hucprof::MetricsServer> server = std::move(started).value();
  if (slow_route) server->add_route("/slow", slow_page);
  std::printf("listening on %s%s\n", server->bound_address().c_str(),
              server->tls() ? " (TLS)" : "");
  std::fflush(stdout);
  int signal = 0;
  sigwait(&stop, &signal);
  server.reset();
  return 0;
}
